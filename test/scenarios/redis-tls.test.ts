/**
 * `rediss://` to a server whose certificate a private CA signed (made here with openssl), against the compiled
 * binary: without the CA, the error says what to set; with NODE_EXTRA_CA_CERTS naming it, the store works.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am } from "../support/e2e.ts";
import { RedisServer } from "../support/redis-server.ts";

let dir: string;
let server: RedisServer;
let tlsPort: number;

function openssl(args: string[]): void {
  if (!Bun.which("openssl")) throw new Error("openssl is not installed; run: apt-get install -y openssl");
  const result = Bun.spawnSync(["openssl", ...args], { cwd: dir, stdin: "ignore" });
  if (result.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${result.stderr.toString()}`);
}

function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "agentmail-tls-"));
  openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=agentmail test CA",
  ]);
  openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"]);
  writeFileSync(join(dir, "ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "ext",
  ]);
  tlsPort = freePort();
  const tls = ["--tls-port", String(tlsPort), "--tls-cert-file", join(dir, "server.pem"), "--tls-key-file", join(dir, "server.key")];
  server = await RedisServer.start({ args: () => [...tls, "--tls-ca-cert-file", join(dir, "ca.pem"), "--tls-auth-clients", "no"] });
});

afterAll(async () => {
  await server?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("a private CA's server: refused with the fix (NODE_EXTRA_CA_CERTS), and working once it is set", async () => {
  const env = {
    AGENTMAIL_URL: `rediss://127.0.0.1:${tlsPort}`,
    AGENTMAIL_NAMESPACE: "tls",
    AGENTMAIL_REDIS_TIMEOUT: "",
    PATH: process.env.PATH ?? "",
  };
  const refused = await am(["watch", "--once", "--json"], { env, cwd: dir });
  expect(refused.code).toBe(1);
  expect(JSON.parse(refused.stdout).error.message).toBe(
    `cannot reach the mail server at rediss://127.0.0.1:${tlsPort}: the server's TLS certificate is not trusted ` +
      "(self signed certificate in certificate chain); if a private CA signed it, export NODE_EXTRA_CA_CERTS=/path/to/ca.pem for every agentmail process",
  );
  const trusted = await am(["watch", "--once", "--json"], { env: { ...env, NODE_EXTRA_CA_CERTS: join(dir, "ca.pem") }, cwd: dir });
  expect({ code: trusted.code, stderr: trusted.stderr }).toEqual({ code: 0, stderr: "" });
  expect(JSON.parse(trusted.stdout)).toMatchObject({ store: `redis rediss://127.0.0.1:${tlsPort}`, agents: [], feed: [] });
});
