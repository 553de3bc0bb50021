/**
 * A real full disk for tests: a small private tmpfs mounted on a temporary directory, filled to the last byte by a
 * filler file beside the directory the test uses as its store. Mounting needs root (or CAP_SYS_ADMIN); without it
 * the test fails with a message saying so, it never skips.
 */
import { afterAll, afterEach, beforeAll } from "bun:test";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SmallDisk {
  /** The mount point. */
  mount: string;
  /** An empty directory on it, for the store: the filler lives beside it, not in it. */
  store: string;
  /** Writes a filler file until the file system refuses another byte. */
  fill(): void;
  /** Removes the filler: the space is free again. */
  free(): void;
  /** Unmounts and removes the mount point. */
  remove(): void;
}

export function mountSmallDisk(sizeKiB = 256): SmallDisk {
  const mount = mkdtempSync(join(tmpdir(), "agentmail-disk-"));
  const result = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0700`, "tmpfs", mount]);
  if (result.exitCode !== 0) {
    rmSync(mount, { recursive: true, force: true });
    throw new Error(
      `this test needs a real full disk: it mounts a ${sizeKiB} KiB tmpfs, which failed (${result.stderr.toString().trim()}); ` +
        "run the tests as root or in a container with CAP_SYS_ADMIN",
    );
  }
  const store = join(mount, "store");
  mkdirSync(store, { mode: 0o700 });
  const filler = join(mount, "filler");
  return {
    mount,
    store,
    fill() {
      const fd = openSync(filler, "a");
      const block = Buffer.alloc(4096, 0x78);
      try {
        for (let size = block.length; size > 0; ) {
          try {
            writeSync(fd, block, 0, size);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
            size >>= 1;
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    remove() {
      Bun.spawnSync(["umount", "-l", mount]);
      rmSync(mount, { recursive: true, force: true });
    },
  };
}

/**
 * One small disk for the describe (or file) it is called in, its space freed and its store emptied after each test.
 * Registers its hooks where it is called; the disk is there once they have run.
 */
export function smallDiskForEachTest(sizeKiB?: number): Pick<SmallDisk, "store" | "fill" | "free"> {
  let disk: SmallDisk | undefined;
  beforeAll(() => {
    disk = mountSmallDisk(sizeKiB);
  });
  afterAll(() => disk?.remove());
  afterEach(() => {
    disk!.free();
    rmSync(disk!.store, { recursive: true, force: true });
    mkdirSync(disk!.store, { mode: 0o700 });
  });
  return {
    get store() {
      return disk!.store;
    },
    fill: () => disk!.fill(),
    free: () => disk!.free(),
  };
}
