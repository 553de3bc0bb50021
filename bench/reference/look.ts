/**
 * A compiled Bun hello-world plus the file work of `agentmail receive --hook` with AGENTMAIL_NAME when nothing is
 * unread (what a hook finds on most turns): find the store, read the registration, open the mailbox and the cursor,
 * read the cursor's header and the last line it passed, see that nothing follows, close. No lock is taken.
 */
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";

const name = process.env.AGENTMAIL_NAME!;
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
JSON.parse(readFileSync(`${root}/.agents/${name}.json`, "utf8"));

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;
const mailbox = `${root}/${name}.jsonl`;
const fd = openSync(mailbox, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
const size = fstatSync(fd).size;
const cursor = openSync(`${mailbox}.cursor`, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
fstatSync(cursor);
const header = Buffer.allocUnsafe(128);
readSync(cursor, header, 0, 128, 0);
closeSync(cursor);
const [, , lineStart, offset] = header.toString("latin1").split(" ").map(Number) as number[];
const tail = Buffer.allocUnsafe(size - lineStart!);
readSync(fd, tail, 0, tail.length, lineStart!);
closeSync(fd);
if (tail.indexOf(10, offset! - lineStart!) !== -1) process.exitCode = 2;
