/**
 * Projects: which store an agent in a tmux window receives its mail from. A window belongs to the project of the
 * repository its pane works in (tmux's `pane_current_path`, read in src/tmux); the worktrees of one repository are
 * one project (one git common dir), and on the Redis store a project is a namespace. So the windows of one tmux
 * server are sorted: this project's agents (addressed by name, a name held by one of them only), other projects'
 * agents (reached as `name@project`, or by a name no agent here has), and windows outside every repository, which
 * are no project's agent.
 *
 * A store set by AGENTMAIL_DIR, or a Redis namespace set by AGENTMAIL_NAMESPACE, is not the repository's: then no
 * window is sorted out (every window is this store's, as before projects), and `name@namespace` still crosses to
 * another namespace.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { nameProblem } from "../mail/addresses.ts";
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

/** How a window's project is known on the Redis store: its namespace (null: none can be derived there). */
export type NamespaceOf = (repository: Repository) => string | null;

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
  const unsorted = { caller, projects: { own: null, elsewhere: [], outside: [] } };
  if (env.AGENTMAIL_DIR || (namespaceOf !== null && env.AGENTMAIL_NAMESPACE?.trim())) return unsorted;
  if (repository === null) return unsorted;
  const own = projectFor(repository, namespaceOf);
  if (own === null) return unsorted;
  // Keys of this project: its own, and that of the caller's pane's directory ("" outside every repository).
  const ours = new Set<string>([own.key]);
  let callerPath = "";
  for (const window of caller.serverWindows) if (window.id === caller.windowId) callerPath = window.path;
  const projects = new Map<string, Project | null>();
  const keyAt = (path: string): string => {
    const found = repositoryAt(path);
    if (found === null) return "";
    let project = projects.get(found.commonDir);
    if (project === undefined) projects.set(found.commonDir, (project = projectFor(found, namespaceOf)));
    return project === null ? "" : project.key;
  };
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
      elsewhere.push({ ...window, project: projects.get(repositoryAt(window.path)!.commonDir)! });
    }
  }
  return { caller: { ...caller, windows, serverWindows }, projects: { own, elsewhere, outside } };
}
