/**
 * Projects: which store an agent in a tmux window receives its mail from. A window belongs to the project of the
 * repository its pane works in (tmux's `pane_current_path`, read in src/tmux); the worktrees of one repository are
 * one project (one git common dir), and on the Redis store a project is a namespace. So the windows of one tmux
 * server are sorted: this project's agents (addressed by name, a name held by one of them only), other projects'
 * agents (reached as `name@project`, or by a name no agent here has), and windows outside every repository, which
 * are no project's agent.
 *
 * A store set by AGENTMAIL_DIR (to another directory than the repository's own), or a Redis namespace set by
 * AGENTMAIL_NAMESPACE, is not the repository's: then no window is sorted out (every window is this store's, as before
 * projects), and `name@namespace` still crosses to another namespace.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { nameProblem } from "../mail/addresses.ts";
import { namespacesOf, type NamespaceOf } from "../store/open.ts";
import { findRepository, type Repository } from "../store/paths.ts";
import type { Caller, Window } from "../tmux/caller.ts";

type Env = Record<string, string | undefined>;

export interface Project {
  /** What tells projects apart: the git common dir on the file store, the namespace on Redis. */
  key: string;
  /** How addresses and replies name it: the alias (`git config agentmail.project NAME`), else the repository's directory name; on Redis the namespace. */
  name: string;
  /** Every name that addresses it: the alias, the directory name, on Redis the namespace too. */
  names: string[];
  /** Where its store is found; null for a Redis namespace known only by its name. */
  repository: Repository | null;
}

export interface ProjectWindow extends Window {
  project: Project;
}

/** The tmux server's windows, sorted by project (see the head of this file). */
export interface ProjectView {
  /** This project's own project, when it has one (null: the store is not a repository's, see the head of this file). */
  own: Project | null;
  /** Windows whose panes work in another project. */
  elsewhere: ProjectWindow[];
  /** Windows whose panes work outside every repository (when this project is a repository's). */
  outside: Window[];
}

/** Repositories found per path, once per process (an MCP server sorts windows on every call). */
const repositories = new Map<string, Repository | null>();

/** The repository a pane works in, found as agentmail finds its own (no GIT_DIR of the caller's applies to it). */
export function repositoryAt(path: string): Repository | null {
  const known = repositories.get(path);
  if (known !== undefined) return known;
  let found: Repository | null;
  try {
    found = findRepository(path, {});
  } catch {
    // A broken `.git` file: no repository agentmail could use there either.
    found = null;
  }
  repositories.set(path, found);
  return found;
}

/** The repository's directory name: the common dir's parent for a usual `.git`, the bare repository's name less `.git`. */
function directoryName(commonDir: string): string {
  const base = basename(commonDir);
  if (base === ".git") return basename(dirname(commonDir));
  return base.endsWith(".git") && base.length > 4 ? base.slice(0, -4) : base;
}

/**
 * `project` of `[agentmail]` in the repository's git config (`git config agentmail.project NAME`), or null. A value
 * that could not be a name (see nameProblem) is passed over: the directory name stays.
 */
export function configuredAlias(commonDir: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(commonDir, "config"), "utf8");
  } catch {
    return null;
  }
  let inSection = false;
  let alias: string | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("[")) {
      const end = line.indexOf("]");
      inSection = end > 0 && line.slice(1, end).trim().toLowerCase() === "agentmail";
      continue;
    }
    if (!inSection) continue;
    const equals = line.indexOf("=");
    if (equals === -1 || line.slice(0, equals).trim().toLowerCase() !== "project") continue;
    let value = line.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    // The last one wins, as with git.
    alias = value !== "" && nameProblem(value) === null && !value.includes("@") ? value : alias;
  }
  return alias;
}

const fileProjects = new Map<string, Project>();

/** The file store's project of a repository. */
export function projectOf(repository: Repository): Project {
  const known = fileProjects.get(repository.commonDir);
  if (known) return known;
  const directory = directoryName(repository.commonDir);
  const alias = configuredAlias(repository.commonDir);
  const names = alias === null || alias === directory ? [directory] : [alias, directory];
  const project: Project = { key: repository.commonDir, name: names[0]!, names, repository };
  fileProjects.set(repository.commonDir, project);
  return project;
}

/** A Redis namespace known only by its name (no window here works in it): a project of that one name. */
export const namespaceProject = (namespace: string): Project => ({ key: namespace, name: namespace, names: [namespace], repository: null });

/** The project of a repository on the store the caller uses: the file store's, or the Redis namespace it maps to. */
function projectFor(repository: Repository, namespaceOf: NamespaceOf | null): Project | null {
  const project = projectOf(repository);
  if (namespaceOf === null) return project;
  const namespace = namespaceOf(repository);
  if (namespace === null) return null;
  const names = [namespace];
  for (const name of project.names) if (name !== namespace) names.push(name);
  return { key: namespace, name: namespace, names, repository };
}

/**
 * The one rule that tells which project a working directory belongs to, for a store: its own project, and the key
 * of the project at any path ("" outside every repository). Null when no path is sorted out (see the head of this
 * file: a store set by AGENTMAIL_DIR or AGENTMAIL_NAMESPACE, no repository, or on Redis no namespace for it): then
 * every window is this store's.
 */
export interface ProjectBoundary {
  own: Project;
  /** The key of the project of the repository `path` is in, "" outside every repository. */
  keyAt(path: string): string;
  /** The project of the repository `path` is in, or null outside every repository. */
  projectAt(path: string): Project | null;
}

export function projectBoundary(repository: Repository | null, env: Env, namespaceOf: NamespaceOf | null): ProjectBoundary | null {
  if (repository === null || storeNotTheRepository(repository, env, namespaceOf !== null)) return null;
  const own = projectFor(repository, namespaceOf);
  if (own === null) return null;
  const projects = new Map<string, Project | null>();
  const projectAt = (path: string): Project | null => {
    const found = repositoryAt(path);
    if (found === null) return null;
    let project = projects.get(found.commonDir);
    if (project === undefined) projects.set(found.commonDir, (project = projectFor(found, namespaceOf)));
    return project;
  };
  return { own, projectAt, keyAt: (path) => projectAt(path)?.key ?? "" };
}

/**
 * Whether the store is set apart from the repository's: on the file store AGENTMAIL_DIR naming another directory than
 * the repository's own (`<git common dir>/mail`, which the mailman's daemon is handed), on Redis AGENTMAIL_NAMESPACE
 * (AGENTMAIL_DIR there only keeps this host's files).
 */
function storeNotTheRepository(repository: Repository, env: Env, redis: boolean): boolean {
  if (redis) return Boolean(env.AGENTMAIL_NAMESPACE?.trim());
  if (!env.AGENTMAIL_DIR) return false;
  return resolve(repository.workTree ?? repository.commonDir, env.AGENTMAIL_DIR) !== join(repository.commonDir, "mail");
}

/**
 * Whether a pane working in `path` is this project's (the rule `send` and `recipients` apply to windows, and the
 * mailman to the panes it delivers into): always without a boundary; a path tmux does not give stays this project's.
 */
export const worksHere = (boundary: ProjectBoundary | null, path: string): boolean =>
  boundary === null || path === "" || boundary.keyAt(path) === boundary.own.key;

/**
 * The boundary of the store an invocation means (its repository, and on Redis the namespaces): for what acts for a
 * store rather than for a caller in a window, the mailman and doctor. A repository that cannot be found sorts
 * nothing out.
 */
export async function boundaryOf(invocation: { cwd: string; env: Env }): Promise<ProjectBoundary | null> {
  let repository: Repository | null;
  try {
    repository = findRepository(invocation.cwd, invocation.env);
  } catch {
    return null;
  }
  return projectBoundary(repository, invocation.env, await namespacesOf(invocation.env));
}

/**
 * Sorts the caller's tmux windows by project (see the head of this file) and returns the caller narrowed to this
 * project's windows, with the rest. This project: the store's repository, and whatever the caller's own pane works
 * in (a pane in a scratch directory runs commands with another working directory). A window tmux gives no path for
 * stays this project's. `namespaceOf`: on Redis, the namespace of a repository; null on the file store.
 */
export function sortWindows(
  caller: Caller,
  repository: Repository | null,
  env: Env,
  namespaceOf: NamespaceOf | null,
): { caller: Caller; projects: ProjectView } {
  const boundary = projectBoundary(repository, env, namespaceOf);
  if (boundary === null) return { caller, projects: { own: null, elsewhere: [], outside: [] } };
  const { own, keyAt } = boundary;
  // Keys of this project: its own, and that of the caller's pane's directory ("" outside every repository).
  const ours = new Set<string>([own.key]);
  let callerPath = "";
  for (const window of caller.serverWindows) if (window.id === caller.windowId) callerPath = window.path;
  if (callerPath !== "") ours.add(keyAt(callerPath));
  const windows: Window[] = [];
  const serverWindows: Window[] = [];
  const elsewhere: ProjectWindow[] = [];
  const outside: Window[] = [];
  for (const window of caller.serverWindows) {
    const key = window.path === "" || window.id === caller.windowId ? own.key : keyAt(window.path);
    if (ours.has(key)) {
      serverWindows.push(window);
      if (window.sessionId === caller.sessionId) windows.push(window);
    } else if (key === "") {
      outside.push(window);
    } else {
      elsewhere.push({ ...window, project: boundary.projectAt(window.path)! });
    }
  }
  return { caller: { ...caller, windows, serverWindows }, projects: { own, elsewhere, outside } };
}
