/**
 * A compiled Bun hello-world plus the file work of `agentmail receive` with AGENTMAIL_NAME, in steady state (a cursor
 * in place, the oldest unread message right after it): the same file-system calls, in the same order, written
 * straight through with nothing else: find the store, read the registration, look past the cursor without a lock,
 * take the receive lock, read the registration again, read from the cursor, ask the cursor's id set about the id,
 * print the message, mark it read (five bytes in place), move the cursor, append the read time, release the lock.
 * The message is found with one indexOf and JSON.parse, where agentmail scans the line's keys. It runs in a store of
 * its own (bench/run.ts writes its mailbox and a cursor at offset 0), whose cursor header only it reads.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
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
const registration = `${root}/.agents/${name}.json`;
JSON.parse(readFileSync(registration, "utf8"));

const mailbox = `${root}/${name}.jsonl`;
const cursorPath = `${mailbox}.cursor`;
const { O_RDONLY, O_RDWR, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;
const read = (fd: number, start: number, end: number) => {
  const bytes = Buffer.allocUnsafe(end - start);
  readSync(fd, bytes, 0, bytes.length, start);
  return bytes;
};
const cursorAt = () => {
  const fd = openSync(cursorPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  fstatSync(fd);
  const header = read(fd, 0, 128).toString("latin1").split(" ");
  closeSync(fd);
  return Number(header[3]);
};

let fd = openSync(mailbox, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
let size = fstatSync(fd).size;
let offset = cursorAt();
read(fd, offset, size);
closeSync(fd);

const lock = `${mailbox}.rlock`;
const start = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, "utf8").split(" ")[21];
symlinkSync(`am1:${process.pid}:${start}:00000000:000000000000`, lock);
JSON.parse(readFileSync(registration, "utf8"));
fd = openSync(mailbox, O_RDWR | O_NOFOLLOW | O_NONBLOCK);
size = fstatSync(fd).size;
offset = cursorAt();
const region = read(fd, offset, size);
const end = region.indexOf(10);
const message = JSON.parse(region.toString("utf8", 0, end));
const probe = openSync(cursorPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
fstatSync(probe);
read(probe, 128, 256);
closeSync(probe);
writeSync(1, `From: ${message.from}\nID: ${message.id}\n\n${message.message}\n`);
writeSync(fd, "true ", offset + region.indexOf("false"));
const cursor = openSync(cursorPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
fstatSync(cursor);
read(cursor, 128, 256);
writeSync(cursor, Buffer.alloc(8, 1), 0, 8, 128 + 8 * (offset % 16));
writeSync(cursor, `c3 0 ${offset} ${offset + end + 1} 00000000 128 1024 1`.padEnd(127) + "\n", 0);
closeSync(cursor);
const reads = openSync(`${mailbox}.reads`, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
fstatSync(reads);
writeSync(reads, `${message.id} ${new Date().toISOString()}\n`);
closeSync(reads);
closeSync(fd);
lstatSync(lock);
readlinkSync(lock);
unlinkSync(lock);
