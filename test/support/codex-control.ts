/**
 * A stand-in of Codex CLI's app-server control socket: a WebSocket server on a unix socket answering the JSON-RPC calls
 * agentmail makes (its threads, their turns, steer and queue). Its threads are `t-1` and an ephemeral `t-side` unless
 * `threads` names others; each is loaded in `cwd`. The real daemon is in test/agents.
 */
/** The daemon's state: its running turn, a steer that fails, the directory of its threads, the threads it has loaded. */
type CodexState = { activeTurn: string | null; steerFails?: boolean; cwd: string; threads?: string[] };

/** The stand-in daemon's answer to a call: a result, or an error as Codex words it. */
function codexAnswer(state: CodexState, method: string, params: Record<string, any>): object {
  switch (method) {
    case "initialize":
      return { result: { userAgent: "stand-in" } };
    case "thread/loaded/list":
      return { result: { data: state.threads ?? ["t-1", "t-side"] } };
    case "thread/read":
      return { result: { thread: { id: params.threadId, cwd: state.cwd, ephemeral: params.threadId === "t-side" } } };
    case "thread/turns/list":
      return {
        result: { data: state.activeTurn ? [{ id: state.activeTurn, status: "inProgress" }] : [{ id: "old", status: "completed" }] },
      };
    case "turn/steer":
      return state.steerFails
        ? { error: { code: -32600, message: "no active turn to steer" } }
        : { result: { turnId: params.expectedTurnId } };
    case "thread/queue/add":
      return { result: { queuedSubmission: { id: "q-1" } } };
    default:
      return { error: { code: -32601, message: "unknown" } };
  }
}

/** A stand-in of Codex's control socket: the calls agentmail makes, over WebSocket on a unix socket. */
export function codexDaemon(path: string, state: CodexState) {
  const calls: { method: string; params: any }[] = [];
  const answerTo = (method: string, params: Record<string, any>) => codexAnswer(state, method, params);
  const server = Bun.serve({
    unix: path,
    fetch(request, srv) {
      return srv.upgrade(request) ? undefined : new Response("no", { status: 400 });
    },
    websocket: {
      message(ws, text) {
        const message = JSON.parse(String(text));
        if (message.id === undefined) return;
        calls.push({ method: message.method, params: message.params });
        // A request of the daemon's own, which agentmail must refuse rather than leave waiting.
        if (message.method === "initialize")
          ws.send(JSON.stringify({ jsonrpc: "2.0", id: 900, method: "item/commandExecution/requestApproval", params: {} }));
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: message.id, ...answerTo(message.method, message.params ?? {}) }));
      },
    },
  });
  return { calls, server };
}
