/**
 * `doctor`'s checks of what stands behind a Redis store: on a Sentinel URL, the sentinels reached, the primary they
 * name and whether they agree; on any URL, the server's replicas, how far behind each is, and whether `replicas=`
 * can be met.
 */
import { terminalLine } from "../mail/terminal-text.ts";
import type { Topology } from "../store/server.ts";
import { note, ok, problem, type Finding } from "./finding.ts";

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
/** A replica further behind than this is noted: on a working network they acknowledge within a second. */
const LAGGING_SECONDS = 2;

function sentinelFindings(topology: Topology, primaryName: string): Finding[] {
  const views = topology.sentinels ?? [];
  const findings: Finding[] = [];
  const name = terminalLine(primaryName);
  for (const view of views) {
    const sentinel = terminalLine(view.sentinel);
    if (view.error !== null)
      findings.push(
        problem("store", `sentinel ${sentinel} does not answer: ${terminalLine(view.error)}`, `start it, or take it out of AGENTMAIL_URL`),
      );
    else if (view.primary === null) {
      findings.push(
        problem(
          "store",
          `sentinel ${sentinel} monitors no primary named ${name}`,
          "name the primary as its sentinels know it (sentinel monitor <name> …) after the sentinels in AGENTMAIL_URL",
        ),
      );
    } else {
      if (view.tilt)
        findings.push(
          note(
            "store",
            `sentinel ${sentinel} is in TILT mode (its clock jumped: a machine too loaded or suspended); it starts no failover for 30 s`,
          ),
        );
      if (view.flags && /s_down|o_down|failover/.test(view.flags)) {
        findings.push(
          note(
            "store",
            `sentinel ${sentinel} reports the primary as ${terminalLine(view.flags)}: a failover may be under way`,
            "run agentmail doctor again in a minute",
          ),
        );
      }
    }
  }
  const named = views.filter((view) => view.primary !== null);
  const primaries = new Set(named.map((view) => view.primary));
  if (primaries.size > 1) {
    const who = named.map((view) => `${terminalLine(view.sentinel)} names ${terminalLine(view.primary!)}`).join(", ");
    findings.push(
      problem(
        "store",
        `the sentinels disagree on the primary of ${name}: ${who}`,
        "wait for the failover under way to end, then run agentmail doctor again; if they still disagree, check the sentinels' logs and the network between them",
      ),
    );
  } else if (named.length > 0) {
    const [first] = named;
    const known = `quorum ${first!.quorum ?? "?"}, each knowing ${plural(first!.replicas ?? 0, "replica")} and ${plural(first!.otherSentinels ?? 0, "other sentinel")}`;
    findings.unshift(
      ok(
        "store",
        `${named.length} of ${plural(views.length, "sentinel")} answer and name the primary of ${name}: ${terminalLine(first!.primary!)} (${known})`,
      ),
    );
    if (named.length <= views.length / 2) {
      findings.push(
        problem(
          "store",
          `only ${named.length} of ${views.length} sentinels answer: no majority can agree on a failover`,
          "start the sentinels that do not answer",
        ),
      );
    }
  }
  return findings;
}

function replicaFindings(topology: Topology): Finding[] {
  const findings: Finding[] = [];
  const server = terminalLine(topology.server ?? "?");
  if (topology.role === null) return findings;
  if (topology.role !== "master") {
    const fix = "point AGENTMAIL_URL at the primary, or at its sentinels (redis+sentinel://)";
    return [problem("store", `the mail server ${server} is a replica (${terminalLine(topology.role)}): every write is refused`, fix)];
  }
  for (const replica of topology.replicas) {
    const shown = `replica ${terminalLine(replica.node)}: ${terminalLine(replica.state)}, ${replica.behindBytes} bytes behind, last heard ${replica.lagSeconds} s ago`;
    findings.push(replica.state === "online" && replica.lagSeconds <= LAGGING_SECONDS ? ok("store", shown) : note("store", shown));
  }
  const online = topology.replicas.filter((replica) => replica.state === "online").length;
  const wanted = topology.wanted;
  if (wanted > online) {
    findings.push(
      problem(
        "store",
        `replicas=${wanted} in AGENTMAIL_URL asks each write to reach ${plural(wanted, "replica")}, and ${server} has ${online} online: every send fails after ${topology.replicaTimeoutMs} ms`,
        "bring the replicas back, or lower replicas= in AGENTMAIL_URL",
      ),
    );
  } else if (wanted > 0) {
    findings.push(
      ok(
        "store",
        `each write waits for ${plural(wanted, "replica")} of ${online} online (replicas=${wanted}): a failover keeps what was acknowledged`,
      ),
    );
  } else if (topology.sentinels !== null) {
    findings.push(
      note(
        "store",
        "replicas=0: a send is acknowledged before any replica has it, so a failover can lose the last ones sent",
        "add replicas=1 to AGENTMAIL_URL",
      ),
    );
  }
  return findings;
}

/** The findings on the sentinels (when the URL names some) and on the server's replicas. */
export function replicationFindings(topology: Topology): Finding[] {
  return [...(topology.sentinels ? sentinelFindings(topology, topology.primaryName ?? "") : []), ...replicaFindings(topology)];
}
