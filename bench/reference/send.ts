/**
 * A compiled Bun hello-world plus the file work of `agentmail send` with AGENTMAIL_NAME: the same file-system calls,
 * in the same order, written straight through with nothing else: find the store (the git dir checks, the store
 * check), read the sender's and the recipient's registrations and `.agentmailignore`, take the mailbox lock (a
 * symlink naming this process), append one line with one write, fsync, release the lock, print the id.
 * bench/run.ts compiles it like dist/agentmail and runs it in the sender's pane: argv is `<recipient> <message>`.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from "node:fs";

const [, , to, body] = process.argv as [string, string, string, string];
const from = process.env.AGENTMAIL_NAME!;
const git = `${process.cwd()}/.git`;
statSync(git);
lstatSync(`${git}/HEAD`);
readFileSync(`${git}/HEAD`, "latin1");
existsSync(`${git}/commondir`);
statSync(`${git}/objects`);
statSync(`${git}/refs`);
const root = `${git}/mail`;
lstatSync(root);
readdirSync(root);
JSON.parse(readFileSync(`${root}/.agents/${from}.json`, "utf8"));
JSON.parse(readFileSync(`${root}/.agents/${to}.json`, "utf8"));
existsSync(`${process.cwd()}/.agentmailignore`);

const mailbox = `${root}/${to}.jsonl`;
const lock = `${mailbox}.lock`;
const start = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, "utf8").split(" ")[21];
symlinkSync(`am1:${process.pid}:${start}:00000000:000000000000`, lock);
const fd = openSync(mailbox, constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
const size = fstatSync(fd).size;
readSync(fd, Buffer.alloc(1), 0, 1, size - 1);
const id = "AbCdEfGh";
const line = JSON.stringify({ id, from, to, message: body, read_flag: false, created_at: new Date().toISOString() }) + "\n";
writeSync(fd, Buffer.from(line));
fsyncSync(fd);
closeSync(fd);
lstatSync(lock);
readlinkSync(lock);
unlinkSync(lock);
writeSync(1, `${id}\n`);
