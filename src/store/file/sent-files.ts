/**
 * Every file holding mail a sender sent, brought up to date (sent-index.ts): its index loaded, each mailbox and
 * archive scanned from where it left off (sent-scan.ts), the index saved when it changed, what a listing leaves out
 * marked (sent-exclusions.ts), the files left open for the listing to read (sent-open-files.ts).
 */
import { closeSync } from "node:fs";
import { archivePath } from "./archive.ts";
import { mailboxPath } from "../local/layout.ts";
import { agentsWithMail } from "./mail-view.ts";
import { roleRoot } from "./role-mail.ts";
import { loadIndex, saveIndex, type SentFile } from "./sent-index.ts";
import { scanFile } from "./sent-scan.ts";
import { closeAll, KEPT_OPEN, OpenFiles } from "./sent-open-files.ts";
import { excludeArchivedLive, excludeMovedSources } from "./sent-exclusions.ts";

/**
 * Every file holding mail the sender sent, brought up to date, in the order sentBy lists them: every live mailbox
 * (agents', then role queues in `.roles/`), then every archive; each open (the caller closes them: closeAll), with
 * what it leaves out marked. Updates the sender's index as a side effect.
 */
export function sentFiles(root: string, sender: string): SentFile[] {
  const index = loadIndex(root, sender);
  const live: SentFile[] = [];
  const archived: SentFile[] = [];
  let changed = false;
  const roles = roleRoot(root);
  const mailboxes: [dir: string, name: string][] = [];
  for (const agent of agentsWithMail(root)) mailboxes.push([root, agent]);
  for (const queue of agentsWithMail(roles)) mailboxes.push([roles, queue]);
  let open = 0;
  let scanned = 0;
  try {
    for (const [dir, agent] of mailboxes) {
      const mailbox = mailboxPath(dir, agent);
      for (const [path, into] of [
        [mailbox, live],
        [archivePath(dir, agent), archived],
      ] as const) {
        const scan = scanFile(root, path, index.get(path.slice(root.length + 1)), sender);
        if (!scan) continue;
        changed ||= scan.changed;
        scanned += scan.scanned;
        // A file with nothing to list is not read again; of the others, the first KEPT_OPEN stay open (see OpenFiles).
        let fd = scan.fd;
        if (scan.file.count === 0 || open === KEPT_OPEN) {
          closeSync(fd);
          fd = -1;
        } else open++;
        into.push({ ...scan.file, path, archived: into === archived, mailbox, fd, excluded: null });
      }
    }
  } catch (error) {
    closeAll([...live, ...archived]);
    throw error;
  }
  const files = [...live, ...archived];
  if (changed || files.length !== index.size) saveIndex(root, sender, files);
  // What a long scan leaves (columns outgrown, lines parsed) is garbage before the lines are read back: a million
  // lines left 40 MB of it, which the collector would otherwise keep through the whole listing.
  if (scanned > 100_000) Bun.gc(true);
  const handles = new OpenFiles();
  excludeArchivedLive(live, archived, handles);
  excludeMovedSources(files, handles);
  return files;
}
