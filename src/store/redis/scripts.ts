import { Script } from "./connection.ts";

/**
 * The Lua scripts of the Redis mail store. Each runs atomically on the server, so every step of delivery is one
 * round trip with no race between receivers on any host. Keys (P = the namespace's prefix, N = a mailbox's agent):
 *
 *   P mail:N    stream    the mailbox: one entry per message, fields `id` and `record` (the message's JSON record,
 *                         unread, without read_at); never trimmed, only compacted
 *   P read:N    hash      stream id -> read_at, for every read message
 *   P lease:N   hash      stream id -> "<expiry ms>|<token>|<holder>", for every claimed, unacknowledged message
 *   P cursor:N  string    a stream id: every entry up to it is read (only a hint that spares claims a scan)
 *   P ids:N     hash      message id -> stream id
 *   P bell:N    stream    one entry (MAXLEN 1), re-added whenever mail becomes claimable: what a waiter blocks on
 *   P unread    hash      N -> number of unread messages; its fields are the mailboxes
 *   P bell      stream    the namespace's bell (`to` = N), for waiting on any mailbox
 *   P agents    hash      N -> JSON registry record
 *
 * Times come from the server's clock (TIME), so hosts with skewed clocks agree on when a lease runs out.
 */

const NOW = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

const FIELD = `
local function field(fields, name)
  for i = 1, #fields, 2 do
    if fields[i] == name then return fields[i + 1] end
  end
  return ''
end
`;

/** The expiry and token of a lease value "<expiry>|<token>|<holder>". */
const LEASE = `
local function lease_parts(lease)
  local first = string.find(lease, '|', 1, true)
  local second = string.find(lease, '|', first + 1, true)
  return tonumber(string.sub(lease, 1, first - 1)), string.sub(lease, first + 1, second - 1)
end
`;

/**
 * Leases, the cursor and bells are not written to the AOF or to replicas: a lost lease only makes its message
 * claimable again (shown at most once more, as when a receiver dies), the cursor is a hint, and a restart ends every
 * wait. So a claim costs no fsync, and a receive one (its acknowledgement) instead of two.
 */
const UNLOGGED = `
redis.set_repl(redis.REPL_NONE)
`;

/**
 * KEYS: unread, namespace bell, then per message: mail, read, ids, bell. ARGV: count, then per message: agent,
 * id, record, read_at ('' for unread). All or nothing. A message whose id is already in its mailbox with the same
 * record is skipped (a retried send or a resumed migration stores it once); with another record it is a collision
 * and nothing is stored. Returns {stored} or {-1, colliding id}.
 */
export const APPEND = new Script(`
local count = tonumber(ARGV[1])
local seen = {}
local skip = {}
for i = 0, count - 1 do
  local k, a = 3 + i * 4, 2 + i * 4
  local key = KEYS[k + 2] .. '\\n' .. ARGV[a + 1]
  local sid = redis.call('HGET', KEYS[k + 2], ARGV[a + 1])
  if seen[key] then
    if seen[key] ~= ARGV[a + 2] then return {-1, ARGV[a + 1]} end
    skip[i] = true
  elseif sid then
    local entry = redis.call('XRANGE', KEYS[k], sid, sid)[1]
    local same = false
    if entry then
      for j = 1, #entry[2], 2 do
        if entry[2][j] == 'record' and entry[2][j + 1] == ARGV[a + 2] then same = true end
      end
    end
    if not same then return {-1, ARGV[a + 1]} end
    skip[i] = true
  end
  seen[key] = ARGV[a + 2]
end
local stored = 0
for i = 0, count - 1 do
  if not skip[i] then
    local k, a = 3 + i * 4, 2 + i * 4
    local agent, id, record, read_at = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
    local sid = redis.call('XADD', KEYS[k], '*', 'id', id, 'record', record)
    redis.call('HSET', KEYS[k + 2], id, sid)
    if read_at ~= '' then
      redis.call('HSET', KEYS[k + 1], sid, read_at)
      redis.call('HINCRBY', KEYS[1], agent, 0)
    else
      redis.call('HINCRBY', KEYS[1], agent, 1)
      redis.call('XADD', KEYS[k + 3], 'MAXLEN', '1', '*', 'id', id)
      redis.call('XADD', KEYS[2], 'MAXLEN', '~', '1000', '*', 'to', agent)
    end
    stored = stored + 1
  end
end
return {stored}
`);

/**
 * KEYS: mail, read, lease, cursor. ARGV: lease ms, token, holder. Claims the oldest message that is neither read
 * nor under a live lease, and leases it. Moves the cursor past the read messages at the front. Returns
 * {stream id, message id, record, skipped} or {'', '', '', skipped}; skipped lists the live leases passed over
 * (stream id, lease value, ...), so the caller can break those of dead holders on its own host.
 */
export const CLAIM = new Script(`${NOW}${FIELD}${LEASE}${UNLOGGED}
local cursor = redis.call('GET', KEYS[4]) or '0-0'
local from = '(' .. cursor
local front = nil
local at_front = true
local skipped = {}
while true do
  local batch = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', 100)
  if #batch == 0 then break end
  for _, entry in ipairs(batch) do
    local sid = entry[1]
    if redis.call('HEXISTS', KEYS[2], sid) == 1 then
      if at_front then front = sid end
    else
      at_front = false
      local lease = redis.call('HGET', KEYS[3], sid)
      if lease and lease_parts(lease) > now then
        skipped[#skipped + 1] = sid
        skipped[#skipped + 1] = lease
      else
        redis.call('HSET', KEYS[3], sid, string.format('%.0f', now + tonumber(ARGV[1])) .. '|' .. ARGV[2] .. '|' .. ARGV[3])
        if front then redis.call('SET', KEYS[4], front) end
        return {sid, field(entry[2], 'id'), field(entry[2], 'record'), skipped}
      end
    end
    from = '(' .. sid
  end
end
if front then redis.call('SET', KEYS[4], front) end
return {'', '', '', skipped}
`);

/**
 * KEYS: read, lease, unread. ARGV: stream id, token, read_at, agent. Marks a claimed message read. Returns 1, or 0
 * when it already was (another receiver took it over after the lease ran out and acknowledged it first).
 */
export const ACKNOWLEDGE = new Script(`${LEASE}
local lease = redis.call('HGET', KEYS[2], ARGV[1])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  if lease and select(2, lease_parts(lease)) == ARGV[2] then redis.call('HDEL', KEYS[2], ARGV[1]) end
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], ARGV[4], -1)
return 1
`);

/**
 * KEYS: lease, bell, namespace bell. ARGV: agent, then pairs of stream id and token. Drops each lease that still
 * carries that token (a claim given back, or one whose holder is known dead) and rings the bells, since the message
 * can be claimed again. Returns how many were dropped.
 */
export const DROP_LEASES = new Script(`${LEASE}${UNLOGGED}
local dropped = 0
for i = 2, #ARGV, 2 do
  local lease = redis.call('HGET', KEYS[1], ARGV[i])
  if lease and select(2, lease_parts(lease)) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    dropped = dropped + 1
  end
end
if dropped > 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '1', '*', 'id', '')
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', '1000', '*', 'to', ARGV[1])
end
return dropped
`);

/**
 * KEYS: mail, read, ids, cursor, unread, bell, namespace bell. ARGV: message id, agent. Makes a read message unread
 * again; the cursor moves back before it. Returns 1, 0 when it was unread already, -1 when there is no such message.
 */
export const MARK_UNREAD = new Script(`
local sid = redis.call('HGET', KEYS[3], ARGV[1])
if not sid then return -1 end
if redis.call('HDEL', KEYS[2], sid) == 0 then return 0 end
redis.call('HINCRBY', KEYS[5], ARGV[2], 1)
local cursor = redis.call('GET', KEYS[4])
if cursor then
  local before = redis.call('XREVRANGE', KEYS[1], '(' .. sid, '-', 'COUNT', 1)
  local limit = before[1] and before[1][1] or '0-0'
  local function parts(id)
    local dash = string.find(id, '-', 1, true)
    return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
  end
  local cm, cs = parts(cursor)
  local lm, ls = parts(limit)
  if cm > lm or (cm == lm and cs > ls) then redis.call('SET', KEYS[4], limit) end
end
redis.call('XADD', KEYS[6], 'MAXLEN', '1', '*', 'id', ARGV[1])
redis.call('XADD', KEYS[7], 'MAXLEN', '~', '1000', '*', 'to', ARGV[2])
return 1
`);

/**
 * KEYS: mail, read, ids, lease, cursor, bell, unread. ARGV: agent, dry run ('1' or '0'), then pairs of stream id and
 * message id. Deletes those of the given messages that are read (an unread one is always kept). A mailbox left
 * with no message is removed. Returns {dropped, removed (1 or 0)}.
 */
export const COMPACT = new Script(`
local dry = ARGV[2] == '1'
local dropped = 0
for i = 3, #ARGV, 2 do
  local sid, id = ARGV[i], ARGV[i + 1]
  if redis.call('HEXISTS', KEYS[2], sid) == 1 and #redis.call('XRANGE', KEYS[1], sid, sid) == 1 then
    if not dry then
      redis.call('XDEL', KEYS[1], sid)
      redis.call('HDEL', KEYS[2], sid)
      if redis.call('HGET', KEYS[3], id) == sid then redis.call('HDEL', KEYS[3], id) end
    end
    dropped = dropped + 1
  end
end
local left = redis.call('XLEN', KEYS[1])
if dry then left = left - dropped end
if left > 0 then return {dropped, 0} end
if not dry then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
  redis.call('HDEL', KEYS[7], ARGV[1])
end
return {dropped, 1}
`);

/**
 * KEYS: agents. ARGV: name, host, pane, status ('' keeps the current one), exclusive ms. Records that an agent was
 * seen. Refused when the name was seen on another host less than `exclusive ms` ago. Returns {1, record} or
 * {0, the other host's record}.
 */
export const TOUCH_AGENT = new Script(`${NOW}
local old = redis.call('HGET', KEYS[1], ARGV[1])
local previous = old and cjson.decode(old) or nil
local exclusive = tonumber(ARGV[5])
if previous and previous.host ~= ARGV[2] and exclusive > 0 and now - tonumber(previous.last_seen_ms) < exclusive then
  return {0, old}
end
local status = ARGV[4]
if status == '' then status = previous and previous.status or '' end
local since = string.format('%.0f', now)
if previous and previous.status == status and previous.since_ms then since = previous.since_ms end
local record = cjson.encode({ name = ARGV[1], host = ARGV[2], pane = ARGV[3], status = status, since_ms = since,
  last_seen_ms = string.format('%.0f', now) })
redis.call('HSET', KEYS[1], ARGV[1], record)
return {1, record}
`);
