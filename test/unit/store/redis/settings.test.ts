/**
 * Choosing the Redis store from the environment: the URL forms users type, redaction of the password, the timeout,
 * and the namespace (given, or the origin remote normalised so every clone of a repository shares one).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentmailError } from "../../../../src/mail/errors.ts";
import { DEFAULT_TIMEOUT_MS, parseTimeout } from "../../../../src/store/redis/connection.ts";
import { formatHolder, isHolderDead, parseHolder, thisProcess } from "../../../../src/store/redis/holder.ts";
import {
  keyPrefix,
  namespaceOfKey,
  normalizeRemoteUrl,
  originUrlFromConfig,
  resolveNamespace,
} from "../../../../src/store/redis/namespace.ts";
import { closeStores } from "../../../../src/store/kept-stores.ts";
import { openRedisStore } from "../../../../src/store/redis/open.ts";
import { RedisStore } from "../../../../src/store/redis/redis-store.ts";
import { clientUrl, parseServerUrl, redact } from "../../../../src/store/redis/url.ts";

function usageErrorOf(work: () => unknown): AgentmailError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentmailError);
    return error as AgentmailError;
  }
  throw new Error("expected an error");
}

describe("AGENTMAIL_URL", () => {
  test("TCP forms: host, port, user, password, database; valkey is redis; the TLS schemes keep TLS", () => {
    expect(parseServerUrl("redis://localhost")).toMatchObject({
      transport: "tcp",
      tls: false,
      host: "localhost",
      port: 6379,
      db: 0,
      display: "redis://localhost:6379",
    });
    const valkey = parseServerUrl("valkey://cache.example.com:6380/2");
    expect(valkey).toMatchObject({ host: "cache.example.com", port: 6380, db: 2, display: "valkey://cache.example.com:6380/2" });
    const full = parseServerUrl("rediss://mail:s3cr%40t@Redis.Example.com:6390/4");
    expect(full).toMatchObject({ tls: true, host: "redis.example.com", port: 6390, user: "mail", password: "s3cr@t", db: 4 });
    expect(full.display).toBe("rediss://mail@redis.example.com:6390/4");
    expect(clientUrl(full)).toBe("rediss://mail:s3cr%40t@redis.example.com:6390/4");
    expect(parseServerUrl("redis://:p@ss@host")).toMatchObject({ user: "", password: "p@ss", host: "host" });
    expect(parseServerUrl("redis://host?db=3&password=pw")).toMatchObject({ db: 3, password: "pw", display: "redis://host:6379/3" });
    expect(parseServerUrl("redis+tls://host").tls).toBe(true);
    expect(parseServerUrl("valkeys://host").tls).toBe(true);
    const v6 = parseServerUrl("redis://[::1]:7000");
    expect(v6).toMatchObject({ host: "::1", port: 7000, display: "redis://[::1]:7000" });
    expect(clientUrl(v6)).toBe("redis://[::1]:7000/0");
    expect(parseServerUrl("redis://[::1]")).toMatchObject({ port: 6379 });
    expect(clientUrl(parseServerUrl("redis://host"))).toBe("redis://host:6379/0");
  });

  test("socket forms: redis+unix, unix:// (redis-py), a bare path; credentials and ?db= work on all of them", () => {
    const forms = ["redis+unix:///run/redis.sock", "unix:///run/redis.sock", "/run/redis.sock", "valkey+unix:///run/redis.sock"];
    for (const url of [...forms, "redis+unix://localhost/run/redis.sock"]) {
      expect(parseServerUrl(url)).toMatchObject({ transport: "unix", socket: "/run/redis.sock", tls: false, db: 0 });
    }
    const withAll = parseServerUrl("unix://mail:pw%2Fx@/run/redis.sock?db=5");
    expect(withAll).toMatchObject({ transport: "unix", socket: "/run/redis.sock", user: "mail", password: "pw/x", db: 5 });
    expect(withAll.display).toBe("unix://mail@/run/redis.sock?db=5");
    // Bun rejects credentials on a socket URL with no host, and ignores ?db= there: the connection selects it.
    expect(clientUrl(withAll)).toBe("redis+unix://mail:pw%2Fx@localhost/run/redis.sock");
    expect(parseServerUrl("redis+unix:///s?password=pw&username=u")).toMatchObject({ user: "u", password: "pw" });
    expect(clientUrl(parseServerUrl("rediss+unix:///s"))).toBe("redis+tls+unix://localhost/s");
    expect(clientUrl(parseServerUrl("unix:///dir%20with%20space/s"))).toBe("redis+unix://localhost/dir%20with%20space/s");
  });

  test("what cannot be a server address is refused with the forms that work, and never echoes the password", () => {
    const cases = ["", "localhost:6379", "http://host", "redis://", "redis://host:99999", "redis://user:pa/ss@host", "redis+unix://host"];
    cases.push("redis://host/x", "redis://[::1", "redis://[::1]x", "redis://%zz@host");
    for (const url of cases) {
      const error = usageErrorOf(() => parseServerUrl(url));
      expect(error.code).toBe("usage");
      expect(error.message).toContain("redis+unix://");
      expect(error.message).not.toContain("pa/ss");
    }
  });

  test("a Sentinel URL names the sentinels, the primary's name, the database and what a write waits for", () => {
    const plain = parseServerUrl("redis+sentinel://s1,s2:26380,[::1]/mail");
    expect(plain).toMatchObject({ tls: false, db: 0, replicas: 1, replicaTimeoutMs: 2_000, failoverWaitMs: 30_000 });
    expect(plain.sentinel).toEqual({
      nodes: [
        { host: "s1", port: 26379 },
        { host: "s2", port: 26380 },
        { host: "::1", port: 26379 },
      ],
      primary: "mail",
      user: "",
      password: "",
    });
    expect(plain.display).toBe("redis+sentinel://s1:26379,s2:26380,[::1]:26379/mail");
    const full = parseServerUrl(
      "rediss+sentinel://app:pw%2F1@h1:1,h2:2/my-primary/3?replicas=2&replica-timeout=500&failover-wait=9000&sentinel-user=watch&sentinel-password=spw-9",
    );
    expect(full).toMatchObject({
      tls: true,
      user: "app",
      password: "pw/1",
      db: 3,
      replicas: 2,
      replicaTimeoutMs: 500,
      failoverWaitMs: 9_000,
    });
    expect(full.sentinel).toMatchObject({ primary: "my-primary", user: "watch", password: "spw-9" });
    expect(full.display).toBe(
      "rediss+sentinel://app@h1:1,h2:2/my-primary?db=3&replicas=2&replica-timeout=500&failover-wait=9000&sentinel-user=watch",
    );
    expect(redact("sentinel said spw-9, server said pw/1 or pw%2F1", full)).toBe("sentinel said ***, server said *** or ***");
    expect(parseServerUrl("valkey+sentinel://h/m?db=2&replicas=0").sentinel?.primary).toBe("m");
    expect(parseServerUrl("valkey+sentinel://h/m?db=2&replicas=0")).toMatchObject({ db: 2, replicas: 0 });
  });

  test("a single server waits for no replica unless told, and for its timeout after a lost connection", () => {
    expect(parseServerUrl("redis://h")).toMatchObject({ sentinel: null, replicas: 0, failoverWaitMs: null });
    const told = parseServerUrl("redis+unix:///s?db=2&replicas=1&replica-timeout=100");
    expect(told).toMatchObject({ replicas: 1, replicaTimeoutMs: 100, db: 2 });
    expect(told.display).toBe("redis+unix:///s?db=2&replicas=1&replica-timeout=100");
    expect(parseServerUrl("redis://h:1/2?failover-wait=0").display).toBe("redis://h:1/2?failover-wait=0");
  });

  test("a Sentinel URL without sentinels or a primary's name, or with settings that are not numbers, is refused", () => {
    const cases = [
      "redis+sentinel:///mail",
      "redis+sentinel://h1,h2",
      "redis+sentinel://h1/",
      "redis+sentinel://h1/a/1/extra",
      "redis+sentinel://h1,/mail",
      "redis+sentinel://h1:0/mail",
      "redis://h?replicas=-1",
      "redis://h?replicas=two",
      "redis+sentinel://h/m?replica-timeout=0",
      "redis://h?failover-wait=1e9",
    ];
    for (const url of cases) {
      const error = usageErrorOf(() => parseServerUrl(url));
      expect(error.code).toBe("usage");
      expect(error.message).toContain("redis+sentinel://");
    }
    expect(usageErrorOf(() => parseServerUrl("redis://h?replicas=two")).message).toContain("replicas=two, which is not a whole number");
  });

  test("a password with a raw / is not echoed by the database check either", () => {
    for (const url of ["redis://:p@ss/w0rd-secret@host", "redis+sentinel://:p@ss/m/w0rd-secret@host"]) {
      const error = usageErrorOf(() => parseServerUrl(url));
      expect(error.message).not.toContain("w0rd");
      expect(error.message).toContain("a raw / in the password");
    }
  });

  test("redaction removes the password, plain or percent-encoded, from text that came from elsewhere", () => {
    const address = parseServerUrl("redis://:hunter2@x@host");
    expect(address.password).toBe("hunter2@x");
    expect(redact("auth hunter2@x failed, hunter2%40x too", address)).toBe("auth *** failed, *** too");
    expect(redact("a short pw stays", parseServerUrl("redis://:a@host"))).toBe("a short pw stays");
  });
});

describe("AGENTMAIL_REDIS_TIMEOUT", () => {
  test("seconds or milliseconds, 2 s by default; nonsense is a usage error", () => {
    expect(parseTimeout(undefined)).toBe(DEFAULT_TIMEOUT_MS);
    expect(parseTimeout(" ")).toBe(2_000);
    expect(parseTimeout("5")).toBe(5_000);
    expect(parseTimeout("0.5")).toBe(500);
    expect(parseTimeout("3s")).toBe(3_000);
    expect(parseTimeout("250ms")).toBe(250);
    for (const bad of ["0", "fast", "-1", "10m", "601"]) {
      expect(usageErrorOf(() => parseTimeout(bad)).message).toContain("AGENTMAIL_REDIS_TIMEOUT");
    }
  });
});

describe("the namespace", () => {
  test("SSH, scp-like and HTTPS remotes of one repository normalise to one name, without credentials or port", () => {
    const forms = [
      "git@github.com:acme/widgets.git",
      "ssh://git@github.com/acme/widgets.git",
      "ssh://git@github.com:22/acme/widgets",
      "https://github.com/acme/widgets",
      "https://user:ghp_token@GitHub.com/acme/widgets.git/",
      "git://github.com/acme/widgets.git",
      "github.com:acme/widgets",
    ];
    for (const form of forms) expect(normalizeRemoteUrl(form, "/repo")).toBe("github.com/acme/widgets");
    expect(normalizeRemoteUrl("https://[::1]:8080/a/b.git", "/r")).toBe("[::1]/a/b");
    expect(normalizeRemoteUrl("file:///srv/git/project.git", "/r")).toBe("file:/srv/git/project");
    expect(normalizeRemoteUrl("/srv/git/project.git/", "/r")).toBe("file:/srv/git/project");
    expect(normalizeRemoteUrl("../project.git", "/home/me/clone")).toBe("file:/home/me/project");
  });

  test("the origin remote's url is read from a git config, quotes and comments included", () => {
    const config = [
      "[core]",
      "\turl = not-this",
      '[remote "upstream"]',
      "\turl = git@github.com:other/repo.git",
      '[remote "origin"]',
      '\tURL = "git@github.com:acme/widgets.git" ; the main one',
      "\tfetch = +refs/heads/*:refs/remotes/origin/*",
    ].join("\n");
    expect(originUrlFromConfig(config)).toBe("git@github.com:acme/widgets.git");
    expect(originUrlFromConfig('[remote "origin"] url = https://h/a\\"b # note')).toBe('https://h/a"b');
    expect(originUrlFromConfig('[remote "origin"]\n\tfetch = x\n[core]\n\turl = y')).toBeNull();
    expect(originUrlFromConfig('[remote "origin"]\n\turl = ""')).toBeNull();
    expect(originUrlFromConfig('[remote "origin"] fetch = x')).toBeNull();
  });

  test("AGENTMAIL_NAMESPACE wins; else the repository's origin; with neither, an error that says to set one", () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-ns-")));
    try {
      expect(Bun.spawnSync(["git", "init", "-q", dir]).exitCode).toBe(0);
      const gitDir = join(dir, ".git");
      expect(resolveNamespace({ AGENTMAIL_NAMESPACE: " team-x " }, gitDir)).toBe("team-x");
      const missing = usageErrorOf(() => resolveNamespace({}, gitDir));
      expect(missing.message).toContain("no origin remote");
      expect(missing.message).toContain("AGENTMAIL_NAMESPACE");
      expect(Bun.spawnSync(["git", "-C", dir, "remote", "add", "origin", "https://tok:en@github.com/acme/widgets.git"]).exitCode).toBe(0);
      expect(resolveNamespace({}, gitDir)).toBe("github.com/acme/widgets");
      expect(usageErrorOf(() => resolveNamespace({}, null)).message).toContain("not inside a git repository");
      expect(usageErrorOf(() => resolveNamespace({}, join(dir, "nowhere"))).message).toContain("cannot be read");
      expect(usageErrorOf(() => resolveNamespace({ AGENTMAIL_NAMESPACE: "a\u0007b" }, null)).message).toContain("control characters");
      expect(usageErrorOf(() => resolveNamespace({ AGENTMAIL_NAMESPACE: "x".repeat(301) }, null)).message).toContain("shorter");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("keys of two namespaces never meet: braces and spaces are escaped, so the prefix ends at its only }", () => {
    expect(keyPrefix("github.com/acme/widgets")).toBe("agentmail:{github.com/acme/widgets}:");
    expect(keyPrefix("a}:mail:b {x}%")).toBe("agentmail:{a%7D:mail:b%20%7Bx%7D%25}:");
  });

  test("a wide space and a space followed by digits make two sets of keys, not one", () => {
    expect(keyPrefix("a\u2000b")).not.toBe(keyPrefix("a 00b"));
    expect(keyPrefix("a\u2000b")).toBe("agentmail:{a%u2000b}:");
  });

  test("a key's namespace is read back exactly, escapes of two and four digits alike; a key not agentmail's has none", () => {
    for (const namespace of ["github.com/acme/widgets", "a}:mail:b {x}%", "wide\u3000space", "a 00b", "a\u2000b", "%u2000", "%25"]) {
      expect(namespaceOfKey(`${keyPrefix(namespace)}agents`)).toBe(namespace);
    }
    expect(namespaceOfKey("other:{x}:agents")).toBeNull();
    expect(namespaceOfKey("agentmail:{unclosed")).toBeNull();
  });
});

describe("opening the store from the environment", () => {
  test("the settings come from the environment; no connection is opened; the password is never shown", async () => {
    const env = {
      AGENTMAIL_URL: "redis://:pw-secret@h:1/2",
      AGENTMAIL_NAMESPACE: "n",
      AGENTMAIL_REDIS_TIMEOUT: "500ms",
      AGENTMAIL_HOST: " b-2 ",
    };
    const store = await openRedisStore({ cwd: "/", env });
    expect(store).toBeInstanceOf(RedisStore);
    expect(store.sharedAcrossHosts).toBe(true);
    expect(store.description).toBe("redis redis://h:1/2");
    expect(store.location).toBe("redis://h:1/2");
    expect((store as RedisStore).namespace).toBe("n");
    expect(Bun.inspect(store)).not.toContain("pw-secret");
    store.close();
  });

  test("its local directory is the repository's it was opened from; another project is a namespace with the same settings, kept open", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-redis-local-")));
    try {
      Bun.spawnSync(["git", "init", "-q", dir]);
      const env = { AGENTMAIL_URL: "redis://:pw@h:1/2", AGENTMAIL_NAMESPACE: "here", AGENTMAIL_REDIS_TIMEOUT: "500ms" };
      const store = await openRedisStore({ cwd: dir, env });
      expect(store.localRoot()).toBe(join(dir, ".git", "mail"));
      expect((await openRedisStore({ cwd: dir, env: { ...env, AGENTMAIL_DIR: join(dir, "kept") } })).localRoot()).toBe(join(dir, "kept"));
      const there = await store.projectStore({ key: "there", repository: null });
      expect(there.namespace).toBe("there");
      expect(there.location).toBe(store.location);
      expect(there.pointer).toBe("export AGENTMAIL_URL=redis://h:1/2 AGENTMAIL_NAMESPACE=there (with the server's password in the URL)");
      // Its local directory is still this repository's: AGENTMAIL_DIR named ours, not the other project's.
      expect(there.localRoot()).toBe(join(dir, ".git", "mail"));
      expect(await store.projectStore({ key: "there", repository: null })).toBe(there);
      store.close();
    } finally {
      await closeStores();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("bad settings fail before any connection, saying what to set", async () => {
    const open = (env: Record<string, string>, cwd = "/") =>
      openRedisStore({ cwd, env }).then(
        () => null,
        (error: unknown) => error,
      );
    const badUrl = (await open({ AGENTMAIL_URL: "http://h", AGENTMAIL_NAMESPACE: "n" })) as AgentmailError;
    expect(badUrl.message).toContain("redis+unix://");
    const badTimeout = (await open({
      AGENTMAIL_URL: "redis://h",
      AGENTMAIL_NAMESPACE: "n",
      AGENTMAIL_REDIS_TIMEOUT: "soon",
    })) as AgentmailError;
    expect(badTimeout.message).toContain("AGENTMAIL_REDIS_TIMEOUT");
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-open-")));
    try {
      const noNamespace = (await open({ AGENTMAIL_URL: "redis://h" }, dir)) as AgentmailError;
      expect(noNamespace).toBeInstanceOf(AgentmailError);
      expect(noNamespace.message).toContain("set AGENTMAIL_NAMESPACE");
      expect(Bun.spawnSync(["git", "init", "-q", dir]).exitCode).toBe(0);
      expect(Bun.spawnSync(["git", "-C", dir, "remote", "add", "origin", "git@github.com:acme/widgets.git"]).exitCode).toBe(0);
      const fromOrigin = (await openRedisStore({ cwd: dir, env: { AGENTMAIL_URL: "redis://h" } })) as RedisStore;
      expect(fromOrigin.namespace).toBe("github.com/acme/widgets");
      fromOrigin.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("lease holders", () => {
  test("a holder round-trips through its text form; only a dead process on this host and pid namespace is known dead", () => {
    const me = thisProcess("box");
    expect(parseHolder(formatHolder(me))).toEqual(me);
    expect(parseHolder("junk")).toBeNull();
    expect(isHolderDead(me, me)).toBe(false);
    const child = Bun.spawnSync(["true"]);
    const dead = { ...me, pid: child.pid, start: "" };
    expect(isHolderDead(dead, me)).toBe(true);
    expect(isHolderDead({ ...dead, host: "elsewhere" }, me)).toBe(false);
    expect(isHolderDead({ ...dead, pidNamespace: "pid:[1]" }, me)).toBe(false);
    expect(isHolderDead({ ...dead, pidNamespace: "" }, { ...me, pidNamespace: "" })).toBe(false);
  });
});
