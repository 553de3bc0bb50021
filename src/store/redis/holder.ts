import { isDecimal } from "../../mail/ids.ts";
import { currentProcess, HOSTNAME, isGone, pidNamespace } from "../durable/process-identity.ts";

/**
 * Who holds a lease (a message being shown), written into it: the agent host, the pid, the pid's start time and the pid namespace.
 * A receiver on the same host in the same pid namespace can tell that the holder died and break the lease at
 * once; any other receiver waits for the lease to run out. The namespace matters: two containers sharing a host
 * name see different processes under one pid.
 */
export interface Holder {
  host: string;
  pid: number;
  start: string;
  pidNamespace: string;
}

let self: Holder | undefined;

export function thisProcess(host: string): Holder {
  self ??= { host, pid: process.pid, start: currentProcess().start ?? "", pidNamespace: pidNamespace() };
  return { ...self, host };
}

const SEPARATOR = "\t";

export function formatHolder(holder: Holder): string {
  const parts = [holder.host, holder.pid, holder.start, holder.pidNamespace];
  return parts.map((part) => String(part).replaceAll(SEPARATOR, " ")).join(SEPARATOR);
}

export function parseHolder(text: string): Holder | null {
  const [host, pid, start, namespace] = text.split(SEPARATOR);
  if (host === undefined || !isDecimal(pid ?? "")) return null;
  return { host, pid: Number(pid), start: start ?? "", pidNamespace: namespace ?? "" };
}

/**
 * True only when the holder is certainly dead: it ran on this host in this pid namespace (known to be one), and
 * its pid is gone, a zombie, or reused. Anything else, including another host, is never known dead.
 */
export function isHolderDead(holder: Holder, me: Holder): boolean {
  if (holder.host !== me.host || holder.pidNamespace === "" || holder.pidNamespace !== me.pidNamespace) return false;
  return isGone({ pid: holder.pid, host: HOSTNAME, start: holder.start || null });
}
