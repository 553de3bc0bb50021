/** Look-alike names (mail/confusables.ts): the skeleton folds what a reader cannot tell apart, and nothing more. */
import { describe, expect, test } from "bun:test";
import { lookAlikes, skeleton } from "../../../src/mail/confusables.ts";

describe("look-alike names", () => {
  test("Cyrillic and Greek letters drawn like Latin ones, fullwidth forms, case and invisible characters fold away", () => {
    expect(skeleton("alice")).toBe("alice");
    expect(skeleton("alic\u0435")).toBe("alice"); // Cyrillic е
    expect(skeleton("\u0430lice")).toBe("alice"); // Cyrillic а
    expect(skeleton("\uff41\uff4c\uff49\uff43\uff45")).toBe("alice"); // fullwidth
    expect(skeleton("ALICE")).toBe("alice");
    expect(skeleton("ali\u200bce")).toBe("alice"); // zero-width space
    expect(skeleton("b\u03bfb")).toBe("bob"); // Greek ο
    expect(skeleton("\u0420\u0415\u0412\u0418\u0415\u0412")).not.toBe("review"); // no table entry for и: not folded
  });

  test("lookAlikes names each other agent a name looks like, never the name itself, and not merely similar names", () => {
    const existing = ["alice", "bob", "alice", "Alice", "alicia", "alic\u0435"];
    expect(lookAlikes("alic\u0435", existing)).toEqual(["alice", "Alice"]);
    expect(lookAlikes("carol", existing)).toEqual([]);
    expect(lookAlikes("alicia", existing)).toEqual([]);
    // Case is folded first: ВОВ (Cyrillic) looks like BOB, and so like bob.
    expect(lookAlikes("\u0412\u041e\u0412", ["bob", "BOB"])).toEqual(["bob", "BOB"]);
  });
});
