/**
 * Mail for agents of other projects (identity/projects.ts): `name@project`, or a name no agent of this project has
 * and the agents of exactly one other project do. The copy goes into the store where that agent receives (its
 * repository's, or on Redis its namespace), from `caller@this-project`, so its reply comes back here. Loaded only
 * when an address is not this project's: a plain send never pays for it.
 */
import type { Address } from "../mail/addresses.ts";
import type { Window } from "../mail/copy-plan.ts";
import { AgentmailError, errorWithNextStep } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import type { SentMessage } from "../mail/format.ts";
import { newestFirst } from "../mail/order.ts";
import { closestNames } from "../mail/suggest.ts";
import { PERSON_PANE } from "../store/store.ts";
import type { Store } from "../store/store.ts";
import type { CallerContext } from "../identity/caller.ts";
import { namespaceProject, projectOf, type Project, type ProjectWindow } from "../identity/projects.ts";
import { sent, type SentFilter } from "./follow.ts";

/** A copy for another project's agent. */
export interface RemoteCopy {
  store: Store;
  /** The agent's name there. */
  name: string;
  /** How the sender names it: `name@project`. */
  shown: string;
  /** The sender's name there: `caller@this-project`. */
  sender: string;
  /** This project's store, where a bounce of the copy goes (return-path.ts): the git common dir, or the namespace. */
  senderStore: string;
}

export interface Routed {
  /** The addresses this project's agents take. */
  local: Address[];
  remote: RemoteCopy[];
  /** What the sender is told on stderr (mail delivered into another project's store without being asked to). */
  warnings: string[];
}

const quoted = (name: string) => `"${displayName(name)}"`;

/** This project's name as another project's agent replies to it. */
function ownName(context: CallerContext): string {
  const { store } = context;
  if (context.projects.own) return context.projects.own.name;
  if (store.namespace !== null) return store.namespace;
  if (context.repository) return projectOf(context.repository).name;
  throw new AgentmailError(
    "no_store",
    "this store belongs to no repository, so another project's agent could not reply to it; run inside a repository",
  );
}

/**
 * This project's own store, as the copy records it for its bounce: its key (the git common dir on the file store,
 * the namespace on Redis), so a bounce goes to exactly this store, not to the first one with this project's name.
 */
function ownStore(context: CallerContext): string {
  const { store } = context;
  if (context.projects.own) return context.projects.own.key;
  if (store.namespace !== null) return store.namespace;
  return context.repository!.commonDir;
}

/** Projects are told apart by key; their names may repeat (two clones named alike): then only an alias picks one. */
function projectsNamed(elsewhere: readonly ProjectWindow[], name: string): Project[] {
  const found = new Map<string, Project>();
  for (const window of elsewhere) if (window.project.names.includes(name)) found.set(window.project.key, window.project);
  return [...found.values()];
}

/** Two windows of one name in another project share its mailbox there: refused as in this project (requireOneWindowNamed). */
function requireOneThere(windows: readonly ProjectWindow[], name: string, project: Project): void {
  const holders = windows.filter((window) => window.project.key === project.key && window.name === name);
  if (holders.length < 2) return;
  const panes = holders.map((window) => window.paneId).join(", ");
  throw new AgentmailError(
    "duplicate_name",
    `${holders.length} windows of project ${quoted(project.name)} are named ${quoted(name)} (panes ${panes}); rename one there: tmux rename-window -t ${holders[holders.length - 1]!.paneId} <new-name>`,
  );
}

/**
 * Sorts addresses into this project's and other projects' (see the head of this file). Refused, nothing stored: a
 * project no window works in (on Redis any name is a namespace), a name its project has no agent of, a name that
 * only other projects have when two of them do (naming the address that picks each).
 */
export async function route(context: CallerContext, addresses: readonly Address[], windows: readonly Window[]): Promise<Routed> {
  const local: Address[] = [];
  const remote: RemoteCopy[] = [];
  const warnings: string[] = [];
  const { elsewhere } = context.projects;
  const own = context.projects.own;
  const here = new Set<string>();
  for (const window of windows) here.add(window.name);
  let sender: string | null = null;
  const add = async (project: Project, name: string) => {
    sender ??= `${context.caller.name}@${ownName(context)}`;
    const store = await context.store.projectStore(project);
    remote.push({ store, name, shown: `${name}@${project.name}`, sender, senderStore: ownStore(context) });
  };
  for (const address of addresses) {
    if (address.kind !== "agent") {
      local.push(address);
      continue;
    }
    const { name, project } = address;
    if (project === undefined) {
      if (here.has(name)) {
        local.push(address);
        continue;
      }
      const holders = new Map<string, Project>();
      for (const window of elsewhere) if (window.name === name) holders.set(window.project.key, window.project);
      if (holders.size === 0) {
        // Unknown here and elsewhere: planCopies refuses it with did-you-mean (or it is a person's name).
        local.push(address);
        continue;
      }
      if (holders.size > 1) throw ambiguous(name, [...holders.values()]);
      const [only] = holders.values();
      requireOneThere(elsewhere, name, only!);
      await add(only!, name);
      warnings.push(
        `${quoted(name)} is no agent of this project; it works in project ${quoted(only!.name)}` +
          `${only!.repository?.workTree ? ` (${displayName(only!.repository.workTree)})` : ""}, so the message went into that project's mail, ` +
          `where it receives; its reply comes back here (to be explicit: ${displayName(name)}@${displayName(only!.name)})`,
      );
      continue;
    }
    // A window literally named `name@project` (named before '@' meant a project) keeps its mail.
    if (here.has(`${name}@${project}`)) {
      local.push({ kind: "agent", name: `${name}@${project}` });
      continue;
    }
    if (own?.names.includes(project)) {
      local.push({ kind: "agent", name });
      continue;
    }
    const projects = projectsNamed(elsewhere, project);
    if (projects.length > 1) throw sameNamedProjects(project, projects);
    if (projects.length === 1) {
      const target = projects[0]!;
      const names: string[] = [];
      for (const window of elsewhere) if (window.project.key === target.key) names.push(window.name);
      if (names.includes(name)) requireOneThere(elsewhere, name, target);
      // The person who runs that project's agents has no window: their registration there makes them addressable.
      else if (!(await isPersonThere(context, target, name))) throw unknownThere(name, target.name, names);
      await add(target, name);
      continue;
    }
    if (context.store.namespace !== null) {
      // On a store of namespaces (Redis) a project is a namespace, across hosts: its agents are those registered there.
      const store = await context.store.projectStore(namespaceProject(project));
      const names: string[] = [];
      for (const entry of await store.statuses()) names.push(entry.name);
      if (!names.includes(name)) throw unknownThere(name, project, names);
      sender ??= `${context.caller.name}@${ownName(context)}`;
      remote.push({ store, name, shown: `${name}@${project}`, sender, senderStore: ownStore(context) });
      continue;
    }
    const known: string[] = [];
    for (const window of elsewhere) for (const each of window.project.names) known.push(each);
    throw unknownProject(project, known);
  }
  return { local, remote, warnings };
}

/** Whether `name` is registered as a person (watch, web) in that project's store. Looked up only for a name no window there has. */
async function isPersonThere(context: CallerContext, project: Project, name: string): Promise<boolean> {
  try {
    // Not closed: a Redis store is kept open for the process (store/open.ts), and the copy goes through it next.
    const store = await context.store.projectStore(project);
    return (await store.statuses()).some((entry) => entry.name === name && entry.pane === PERSON_PANE);
  } catch {
    return false;
  }
}

function ambiguous(name: string, projects: readonly Project[]): AgentmailError {
  const picks = projects.map((project) => `${displayName(name)}@${displayName(project.name)}`).join(", ");
  return new AgentmailError(
    "ambiguous_recipient",
    `${quoted(name)} is no agent of this project, and ${projects.length} other projects have one: ${picks}; address the one you mean`,
  );
}

function sameNamedProjects(name: string, projects: readonly Project[]): AgentmailError {
  const where = projects.map((project) => displayName(project.repository?.workTree ?? project.key)).join(", ");
  return new AgentmailError(
    "ambiguous_recipient",
    `${projects.length} projects are named ${quoted(name)} (${where}); give one an alias there: git config agentmail.project <alias>`,
  );
}

function unknownThere(name: string, project: string, names: readonly string[]): AgentmailError {
  const closest = closestNames(name, names);
  const hint = closest.length > 0 ? `; did you mean ${closest.map((each) => quoted(`${each}@${project}`)).join(", ")}?` : "";
  return errorWithNextStep("unknown_recipient", `project ${quoted(project)} has no agent named ${quoted(name)}${hint}`, "listEveryProject");
}

function unknownProject(project: string, known: readonly string[]): AgentmailError {
  const closest = closestNames(project, known);
  const hint = closest.length > 0 ? `; did you mean ${closest.map(quoted).join(", ")}?` : "";
  return errorWithNextStep(
    "unknown_recipient",
    `no project named ${quoted(project)} has an agent on this tmux server${hint}`,
    "listEveryProject",
  );
}

/**
 * What the caller sent into the stores of the other projects on its tmux server (as `caller@this-project`), each copy
 * with its state there and its recipient as `name@project`. A store that cannot be read is passed over.
 */
export async function sentElsewhere(context: CallerContext, filter: SentFilter, whole: boolean): Promise<SentMessage[]> {
  const { own, elsewhere } = context.projects;
  if (own === null) return [];
  const projects = new Map<string, Project>();
  for (const window of elsewhere) projects.set(window.project.key, window.project);
  const found: SentMessage[] = [];
  for (const project of projects.values()) {
    try {
      const store = await context.store.projectStore(project);
      for (const copy of await sent(store, `${context.caller.name}@${own.name}`, filter, whole)) {
        found.push({ ...copy, to: `${String(copy.to)}@${project.name}` });
      }
    } catch {
      // Its store cannot be read from here: its copies are not listed.
    }
  }
  return found;
}

/** This project's sent mail and other projects', newest first. */
export function allSent(here: SentMessage[], there: SentMessage[]): SentMessage[] {
  if (there.length === 0) return here;
  const records = newestFirst([...here, ...there].map((message) => ({ message })));
  return records.map((record) => record.message);
}
