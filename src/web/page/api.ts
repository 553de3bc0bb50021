/**
 * The page's requests: reads carry the token in the URL (as the page's own did), writes in the X-Agentmail-Token
 * header, which a link, a form or a script on another site cannot send.
 */

/** A response's JSON, or an error saying what the server said (a refusal of the token is plain text). */
export async function answerOf<T>(response: { ok: boolean; status: number; text(): Promise<string> }): Promise<T> {
  const text = await response.text();
  let body: { error?: { message?: string } };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(text.trim() || `HTTP ${response.status}`);
  }
  if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
  return body as T;
}

export class Api {
  constructor(readonly token: string) {}

  async get<T>(path: string, params: Record<string, string> = {}): Promise<T> {
    const query = new URLSearchParams({ ...params, token: this.token });
    return answerOf<T>(await fetch(`${path}?${query}`, { headers: { accept: "application/json" } }));
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    const response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", "x-agentmail-token": this.token },
      body: JSON.stringify(body),
    });
    return answerOf<T>(response);
  }

  /** The live stream of the room's events. */
  events(): EventSource {
    return new EventSource(`/events?${new URLSearchParams({ token: this.token })}`);
  }
}
