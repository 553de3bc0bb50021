/**
 * A private OpenSSH server for the tunnel tests: its own host key, one authorized key, listening on a free port of
 * 127.0.0.1, nothing of the machine's ssh configuration used. sshd insists on its privilege separation directory
 * (/run/sshd), so it runs in a mount namespace of its own with a private /run (root, or CAP_SYS_ADMIN): the machine's
 * /run is never touched. Missing sshd or ssh, or no right to mount, fails the caller with the fix; never skipped.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./workflow.ts";

const SSHD = "/usr/sbin/sshd";

function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** Whether something answers on 127.0.0.1:port. */
async function listening(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}

export interface Tunnel {
  /** The local end: 127.0.0.1:port forwards to the remote end. */
  port: number;
  close(): Promise<void>;
}

export class SshServer {
  readonly #dir: string;
  readonly port: number;
  readonly #sshd: Bun.Subprocess;
  readonly #tunnels: Bun.Subprocess[] = [];

  private constructor(dir: string, port: number, sshd: Bun.Subprocess) {
    this.#dir = dir;
    this.port = port;
    this.#sshd = sshd;
  }

  static async start(): Promise<SshServer> {
    if (!existsSync(SSHD) || Bun.which("ssh") === null || Bun.which("ssh-keygen") === null) {
      throw new Error("this test needs OpenSSH (sshd, ssh, ssh-keygen); run: apt-get install -y openssh-server openssh-client");
    }
    const dir = mkdtempSync(join(tmpdir(), "agentmail-sshd-"));
    for (const key of ["host_key", "user_key"]) {
      const made = Bun.spawnSync(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", join(dir, key)]);
      if (made.exitCode !== 0) throw new Error(`ssh-keygen failed: ${made.stderr.toString()}`);
    }
    writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "user_key.pub")), { mode: 0o600 });
    const port = freePort();
    writeFileSync(
      join(dir, "sshd_config"),
      [
        `ListenAddress 127.0.0.1:${port}`,
        `HostKey ${join(dir, "host_key")}`,
        `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
        `PidFile ${join(dir, "sshd.pid")}`,
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "PermitRootLogin prohibit-password",
        "StrictModes no",
        "AllowTcpForwarding local",
        "",
      ].join("\n"),
    );
    const script = `mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -m 0755 /run/sshd && exec ${SSHD} -f '${join(dir, "sshd_config")}' -D -e`;
    const sshd = Bun.spawn(["unshare", "--mount", "sh", "-c", script], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
    const server = new SshServer(dir, port, sshd);
    try {
      await waitFor("sshd to listen", async () => {
        if (sshd.exitCode !== null) {
          const why = await new Response(sshd.stderr).text();
          throw new Error(`sshd did not start (${why.trim()}); it runs in a mount namespace of its own, which needs root or CAP_SYS_ADMIN`);
        }
        return listening(port);
      });
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  /** `ssh -N -L`: a local port forwarded through this server to 127.0.0.1:`target` on its side. */
  async tunnel(target: number): Promise<Tunnel> {
    const port = freePort();
    const ssh = Bun.spawn(
      [
        "ssh",
        "-i",
        join(this.#dir, "user_key"),
        "-F",
        "/dev/null",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "BatchMode=yes",
        "-o",
        "ExitOnForwardFailure=yes",
        "-o",
        "LogLevel=ERROR",
        "-N",
        "-L",
        `127.0.0.1:${port}:127.0.0.1:${target}`,
        "-p",
        String(this.port),
        `${process.env.USER ?? "root"}@127.0.0.1`,
      ],
      { stdin: "ignore", stdout: "ignore", stderr: "pipe" },
    );
    this.#tunnels.push(ssh);
    await waitFor("the tunnel to open", async () => {
      if (ssh.exitCode !== null) throw new Error(`ssh -L failed: ${(await new Response(ssh.stderr).text()).trim()}`);
      return listening(port);
    });
    return {
      port,
      close: async () => {
        ssh.kill();
        await ssh.exited;
      },
    };
  }

  async stop(): Promise<void> {
    for (const ssh of this.#tunnels) ssh.kill();
    await Promise.all(this.#tunnels.map((ssh) => ssh.exited));
    this.#sshd.kill();
    await this.#sshd.exited;
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
