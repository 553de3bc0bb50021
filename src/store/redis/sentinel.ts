/**
 * Redis Sentinel (or Valkey's), as the store uses it: the sentinels are asked which server is the primary, the one
 * that answered last first (Redis's guidelines for Sentinel clients); the connection checks the answer with ROLE and
 * asks again whenever it loses the primary (connection.ts). `doctor` asks every sentinel at once (report).
 */
import { RedisClient } from "bun";
import { TIMED_OUT, seconds, within } from "./deadline.ts";
import { untrustedCertificate } from "./tls.ts";
import type { SentinelView } from "../server.ts";
import type { SentinelSet } from "./url.ts";

export interface Node {
  host: string;
  port: number;
}

/** `host:port`, an IPv6 host in brackets. */
export const nodeName = ({ host, port }: Node): string => `${host.includes(":") ? `[${host}]` : host}:${port}`;

/** No sentinel named a primary: why, per sentinel; `misnamed` when every sentinel answered and none knows the name. */
export class NoPrimary extends Error {
  readonly misnamed: boolean;

  constructor(reason: string, misnamed: boolean) {
    super(reason);
    this.misnamed = misnamed;
  }
}

interface ClientError {
  code?: string;
  message?: string;
}

/** A reply of field/value pairs (SENTINEL MASTER): RESP3 gives an object, RESP2 a flat array. */
function fieldsOf(reply: unknown): Map<string, string> {
  const map = new Map<string, string>();
  if (Array.isArray(reply)) for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), String(reply[i + 1]));
  else if (reply && typeof reply === "object") for (const [key, value] of Object.entries(reply)) map.set(key, String(value));
  return map;
}

export class Sentinels {
  readonly #set: SentinelSet;
  readonly #tls: boolean;
  readonly #timeoutMs: number;
  /** Indexes of the set's nodes, the one that answered last first. */
  #order: number[];
  /** One client per sentinel asked, kept for the next question (a long-lived process asks after every failover). */
  readonly #clients = new Map<number, RedisClient>();

  constructor(set: SentinelSet, tls: boolean, timeoutMs: number) {
    this.#set = set;
    this.#tls = tls;
    this.#timeoutMs = timeoutMs;
    this.#order = set.nodes.map((_, index) => index);
  }

  get primaryName(): string {
    return this.#set.primary;
  }

  #url(index: number): string {
    const { user, password } = this.#set;
    const credentials = user || password ? `${encodeURIComponent(user)}${password ? `:${encodeURIComponent(password)}` : ""}@` : "";
    return `${this.#tls ? "rediss" : "redis"}://${credentials}${nodeName(this.#set.nodes[index]!)}`;
  }

  #client(index: number): RedisClient {
    let client = this.#clients.get(index);
    if (!client) {
      client = new RedisClient(this.#url(index), { autoReconnect: false, maxRetries: 0, connectionTimeout: this.#timeoutMs });
      this.#clients.set(index, client);
    }
    return client;
  }

  /** One command to one sentinel, within the timeout; a failure drops its client, with a reason a user can act on. */
  async #ask(index: number, name: string, args: string[]): Promise<unknown> {
    const client = this.#client(index);
    let reply: unknown;
    try {
      reply = await within(client.send(name, args), this.#timeoutMs);
    } catch (error) {
      this.#drop(index);
      const failure = error as ClientError;
      if (failure.code === "ERR_REDIS_AUTHENTICATION_FAILED") {
        throw new Error(`refused our credentials (${failure.message}); check sentinel-user and sentinel-password in AGENTMAIL_URL`);
      }
      if (failure.code === "ERR_REDIS_CONNECTION_CLOSED")
        throw new Error("the connection was refused or closed (is the sentinel running?)");
      throw new Error((this.#tls ? untrustedCertificate(failure) : null) ?? failure.message ?? String(error));
    }
    if (reply === TIMED_OUT) {
      this.#drop(index);
      throw new Error(`no answer within ${seconds(this.#timeoutMs)}`);
    }
    return reply;
  }

  #drop(index: number): void {
    this.#clients.get(index)?.close();
    this.#clients.delete(index);
  }

  /**
   * The primary, as the first sentinel that knows it says. Throws NoPrimary with every sentinel's answer when none
   * names one.
   */
  async primary(): Promise<Node> {
    const reasons: string[] = [];
    let unaware = 0;
    for (const index of [...this.#order]) {
      const sentinel = nodeName(this.#set.nodes[index]!);
      let reply: unknown;
      try {
        reply = await this.#ask(index, "SENTINEL", ["GET-MASTER-ADDR-BY-NAME", this.#set.primary]);
      } catch (error) {
        reasons.push(`sentinel ${sentinel}: ${(error as Error).message}`);
        continue;
      }
      if (!Array.isArray(reply) || reply.length < 2) {
        unaware++;
        reasons.push(`sentinel ${sentinel} monitors no primary named ${this.#set.primary}`);
        continue;
      }
      this.#order = [index, ...this.#order.filter((other) => other !== index)];
      return { host: String(reply[0]), port: Number(reply[1]) };
    }
    throw new NoPrimary(reasons.join("; "), unaware === this.#set.nodes.length);
  }

  /** What every sentinel says, asked at once (doctor). */
  report(): Promise<SentinelView[]> {
    return Promise.all(
      this.#set.nodes.map(async (node, index): Promise<SentinelView> => {
        const view: SentinelView = {
          sentinel: nodeName(node),
          error: null,
          primary: null,
          flags: null,
          replicas: null,
          otherSentinels: null,
          quorum: null,
          tilt: null,
        };
        try {
          const address = await this.#ask(index, "SENTINEL", ["GET-MASTER-ADDR-BY-NAME", this.#set.primary]);
          if (Array.isArray(address) && address.length >= 2)
            view.primary = nodeName({ host: String(address[0]), port: Number(address[1]) });
          const info = String(await this.#ask(index, "INFO", ["sentinel"]));
          view.tilt = /^sentinel_tilt:1/m.test(info);
          if (view.primary === null) return view;
          const master = fieldsOf(await this.#ask(index, "SENTINEL", ["MASTER", this.#set.primary]));
          view.flags = master.get("flags") ?? null;
          const count = (field: string) => (master.has(field) ? Number(master.get(field)) : null);
          view.replicas = count("num-slaves");
          view.otherSentinels = count("num-other-sentinels");
          view.quorum = count("quorum");
        } catch (error) {
          view.error = (error as Error).message;
        }
        return view;
      }),
    );
  }

  close(): void {
    for (const index of [...this.#clients.keys()]) this.#drop(index);
  }
}
