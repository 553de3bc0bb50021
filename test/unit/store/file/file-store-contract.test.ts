/**
 * The contracts every store passes, on the file store: the Store contract (test/support/store-contract.ts), the claims
 * contract (test/support/claims-contract.ts) and the feed contract (test/support/feed-contract.ts) — the same tests
 * the Redis store passes (test/unit/store/redis/) — and what only the file store's feed has to get right.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "bun:test";
import { FileStore } from "../../../../src/store/file/file-store.ts";
import { claimsContract } from "../../../support/claims-contract.ts";
import { feedContract } from "../../../support/feed-contract.ts";
import { storeContract, type StoreFactory } from "../../../support/store-contract.ts";
import { tempRepo } from "../../../support/repo.ts";

const home = mkdtempSync(join(tmpdir(), "agentmail-contract-"));
let places = 0;

afterAll(() => rmSync(home, { recursive: true, force: true }));

const open = (root: string) => new FileStore(root);

/** Each place a fresh directory; another project, another repository (a repository's store is in its git dir). */
const factory: StoreFactory = {
  freshPlace: (label) => join(home, `${label.replace(/[^a-z0-9]+/gi, "-")}-${++places}`),
  open,
  freshProject: (label) => {
    const repo = tempRepo(`agentmail-${label}-`);
    const commonDir = join(repo.dir, ".git");
    return { project: { key: commonDir, repository: { commonDir, workTree: repo.dir } }, place: repo.mailDir, remove: repo.remove };
  },
};

storeContract(factory);
claimsContract(factory);
feedContract(factory);

describe("the file store's feed", () => {
  test("a journal line for a message that is not marked read (a receive killed between the two) reports nothing until it is", async () => {
    const { appendReadTime } = await import("../../../../src/store/file/read-times.ts");
    const { mailboxPath } = await import("../../../../src/store/local/layout.ts");
    const { createMessage } = await import("../../../../src/mail/message.ts");
    const root = join(home, `killed-${++places}`);
    const store = new FileStore(root);
    const message = createMessage("alice", "bob", "half read");
    await store.append(message);
    const feed = await store.feed();
    try {
      await feed.changes();
      appendReadTime(mailboxPath(root, "bob"), message.id);
      expect(await feed.changes()).toEqual([]);
      expect(await feed.changes()).toEqual([]);
      await store.markRead("bob", message.id);
      expect(await feed.changes()).toEqual([{ kind: "read", mailbox: "bob", id: message.id, read_at: expect.any(String) }]);
    } finally {
      feed.close();
    }
  });
});
