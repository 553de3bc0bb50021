import { Script } from "./connection.ts";

/**
 * The Lua scripts of the Redis store. Each runs atomically on the server, so every step of delivery is one round
 * trip with no race between receivers on any host. Names never appear in a script's source: they come in as
 * arguments, and in keys only encoded (core/names.ts). Keys (P = the namespace's prefix, N = a mailbox's encoded
 * name, S = a sender's encoded name):
 *
 *   P mail:N     stream  the live mailbox: one entry per message, fields `id` and `record` (the message's JSON
 *                        record, unread, without read_at)
 *   P read:N     hash    stream id -> read_at, for every read live message
 *   P lease:N    hash    stream id -> "<expiry ms>|<token>|<holder>", for every message being shown
 *   P cursor:N   string  a stream id: every entry up to it is read (a hint that spares a take the scan)
 *   P ids:N      hash    message id -> stream id, for every live message
 *   P bell:N     stream  one entry (MAXLEN 1), re-added whenever mail becomes takeable: what a waiter blocks on
 *   P arch:N     stream  the mailbox's archive: fields `id`, `record` (as in mail:N) and `read_at` ('' when unread)
 *   P archids:N  hash    message id -> stream id in arch:N
 *   P sent:S     stream  the copies S sent, oldest first: fields `to` (the mailbox) and `id`
 *   P unread     hash    mailbox -> number of unread messages; its fields are the mailboxes with live mail
 *   P archived   set     the mailboxes with an archive
 *   P bell       stream  the namespace's bell (`to` = the mailbox), for waiting on every mailbox
 *   P lists      stream  rung when a group or role list changes (MAXLEN 1)
 *   P groups, P roles   string  the lists as one JSON object (name -> members)
 *   P agents     hash    agent name -> its JSON registry document (registry.ts)
 *   P moved      string  where the namespace's mail moved (store/moved.ts), set by migrate: while it is there,
 *                        sending, taking and every command of an agent are refused (notMoved below)
 *   P claims     string  the claims on paths as one JSON document, `{"claims": [...]}` (src/claims/claims.ts)
 *   P delivery:N stream  the mailbox's delivery record: one entry per event, field `event` (its JSON object,
 *                        core/arrival.ts), never rewritten
 *   P announced:N hash   message id -> '1' for the unread messages an event announces (what a hook leaves alone)
 *
 * Times that decide something across hosts come from the server's clock (TIME), so hosts with skewed clocks agree
 * on when a lease runs out or a name was last used.
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
 * Refuses the script when the namespace's mail moved: KEYS[n] is the moved key. Checked inside the scripts that
 * send, take and register a caller, so no command pays a round trip for it, and a send or take that runs after
 * migrate set the key is refused whatever the caller looked at before.
 */
const notMoved = (n: number) => `
local moved_to = redis.call('GET', KEYS[${n}])
if moved_to then return redis.error_reply('AGENTMAIL_REFUSED ' .. moved_to) end
`;

/**
 * Leases and the cursor are not written to the AOF or to replicas: a lost lease only makes its message takeable
 * again (shown at most once more, as when a receiver dies) and the cursor is a hint. So taking costs no fsync, and a
 * receive one (its acknowledgement) instead of two.
 */
const UNLOGGED = `
redis.set_repl(redis.REPL_NONE)
`;

/**
 * Walks the mailbox from the cursor, oldest first, over entries that are neither read nor under a live lease,
 * calling visit(entry) until it returns true; moves the cursor past the read entries at the front. Collects the
 * live leases passed over (stream id, lease value, ...), so the caller can break those of dead holders on its host.
 * KEYS[1..4]: mail, read, lease, cursor.
 */
const WALK = `${NOW}${LEASE}
local skipped = {}
local function walk(visit)
  local from = '(' .. (redis.call('GET', KEYS[4]) or '0-0')
  local front = nil
  local at_front = true
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
        elseif visit(entry) then
          if front then redis.call('SET', KEYS[4], front) end
          return
        end
      end
      from = '(' .. sid
    end
  end
  if front then redis.call('SET', KEYS[4], front) end
end
`;

/**
 * KEYS: mail, read, ids, bell, archids, sent, unread, namespace bell, moved. ARGV: mailbox, id, record, read_at (''
 * for unread), '1' to index it under its sender. Stores one message, unless the mailbox holds its id already, live
 * or archived (a retried send, a resumed migration or import). Returns 1 when stored, 0 when it was there.
 */
export const APPEND = new Script(`${notMoved(9)}
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 or redis.call('HEXISTS', KEYS[5], ARGV[2]) == 1 then return 0 end
local sid = redis.call('XADD', KEYS[1], '*', 'id', ARGV[2], 'record', ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], sid)
if ARGV[5] == '1' then redis.call('XADD', KEYS[6], '*', 'to', ARGV[1], 'id', ARGV[2]) end
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[2], sid, ARGV[4])
  redis.call('HINCRBY', KEYS[7], ARGV[1], 0)
else
  redis.call('HINCRBY', KEYS[7], ARGV[1], 1)
  redis.call('XADD', KEYS[4], 'MAXLEN', '1', '*', 'id', ARGV[2])
  redis.call('XADD', KEYS[8], 'MAXLEN', '~', '1000', '*', 'to', ARGV[1])
end
return 1
`);

/**
 * KEYS: mail, read, lease, cursor, moved. ARGV: lease ms, token, holder, and a stream id or ''. Leases the oldest
 * entry that is neither read nor under a live lease, or, given a stream id, that entry if it is one of those.
 * Returns {stream id, record, skipped} or {'', '', skipped} (see WALK for skipped).
 */
export const CLAIM = new Script(`${notMoved(5)}${WALK}${FIELD}${UNLOGGED}
local target = ARGV[4]
local taken = nil
walk(function(entry)
  if target ~= '' and entry[1] ~= target then return false end
  redis.call('HSET', KEYS[3], entry[1], string.format('%.0f', now + tonumber(ARGV[1])) .. '|' .. ARGV[2] .. '|' .. ARGV[3])
  taken = entry
  return true
end)
if taken then return {taken[1], field(taken[2], 'record'), skipped} end
return {'', '', skipped}
`);

/**
 * KEYS: mail, read, lease, cursor. ARGV: how many. The oldest takeable entries (neither read nor under a live
 * lease), at most that many: {{stream id, record}, ...}, skipped} (see WALK). What a take with a preference looks
 * at before it claims the one it chose.
 */
export const PEEK = new Script(`${WALK}${FIELD}${UNLOGGED}
local limit = tonumber(ARGV[1])
local found = {}
walk(function(entry)
  found[#found + 1] = {entry[1], field(entry[2], 'record')}
  return #found >= limit
end)
return {found, skipped}
`);

/**
 * KEYS: mail, read, lease, unread. ARGV: stream id, token, read_at, mailbox. Marks a taken message read. Returns 1,
 * or 0 when it already was (marked by hand, or taken over after the lease ran out and acknowledged first) or is
 * no longer live (archived meanwhile).
 */
export const ACKNOWLEDGE = new Script(`${LEASE}
local lease = redis.call('HGET', KEYS[3], ARGV[1])
local mine = lease and select(2, lease_parts(lease)) == ARGV[2]
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 or #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then
  if mine then redis.call('HDEL', KEYS[3], ARGV[1]) end
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HINCRBY', KEYS[4], ARGV[4], -1)
return 1
`);

/**
 * KEYS: lease, bell, namespace bell. ARGV: mailbox, then pairs of stream id and token. Drops each lease that still
 * carries that token (a message whose showing failed, or whose holder is known dead) and rings the bells, since the
 * message can be taken again. Returns how many were dropped.
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
 * KEYS: ids, read, lease, unread. ARGV: message id, read_at, mailbox. Marks an unread live message read (a lease on
 * it is dropped: its holder's acknowledgement then finds it read). Returns read_at, or '' when it was read already
 * or is not live.
 */
export const MARK_READ = new Script(`
local sid = redis.call('HGET', KEYS[1], ARGV[1])
if not sid or redis.call('HEXISTS', KEYS[2], sid) == 1 then return '' end
redis.call('HSET', KEYS[2], sid, ARGV[2])
redis.call('HDEL', KEYS[3], sid)
redis.call('HINCRBY', KEYS[4], ARGV[3], -1)
return ARGV[2]
`);

/** KEYS: mail, read, cursor. The unread live entries from the cursor on, oldest first: {{stream id, record}, ...}. */
export const UNREAD = new Script(`${FIELD}
local from = '(' .. (redis.call('GET', KEYS[3]) or '0-0')
local found = {}
while true do
  local batch = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', 100)
  if #batch == 0 then break end
  for _, entry in ipairs(batch) do
    if redis.call('HEXISTS', KEYS[2], entry[1]) == 0 then found[#found + 1] = {entry[1], field(entry[2], 'record')} end
    from = '(' .. entry[1]
  end
end
return found
`);

/**
 * Looks up message ids, each in its own mailbox, live first then archived. KEYS: five per mailbox (ids, mail, read,
 * archids, arch). ARGV: pairs of the mailbox's position (1-based, in fives) and message id. Returns per pair
 * {'live' or 'archived', record, read_at ('' when unread)}, or {''} when it is in neither.
 */
export const LOOK_UP = new Script(`${FIELD}
local out = {}
for i = 1, #ARGV, 2 do
  local base = (tonumber(ARGV[i]) - 1) * 5
  local id = ARGV[i + 1]
  local result = {''}
  local sid = redis.call('HGET', KEYS[base + 1], id)
  local entry = sid and redis.call('XRANGE', KEYS[base + 2], sid, sid)[1]
  if entry then
    result = {'live', field(entry[2], 'record'), redis.call('HGET', KEYS[base + 3], sid) or ''}
  else
    sid = redis.call('HGET', KEYS[base + 4], id)
    entry = sid and redis.call('XRANGE', KEYS[base + 5], sid, sid)[1]
    if entry then result = {'archived', field(entry[2], 'record'), field(entry[2], 'read_at')} end
  end
  out[#out + 1] = result
end
return out
`);

/**
 * KEYS: mail, read. ARGV: the stream id to start after ('-' for the start), how many. A page of the mailbox, oldest
 * first: {{stream id, record, read_at ('' when unread)}, ...}. What archive reads a long mailbox by.
 */
export const PAGE = new Script(`${FIELD}
local from = ARGV[1] == '-' and '-' or '(' .. ARGV[1]
local page = {}
for _, entry in ipairs(redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', tonumber(ARGV[2]))) do
  page[#page + 1] = {entry[1], field(entry[2], 'record'), redis.call('HGET', KEYS[2], entry[1]) or ''}
end
return page
`);

/**
 * KEYS: mail, read, ids, lease, cursor, unread, arch, archids, archived. ARGV: mailbox, '1' when every message given
 * must be found (a selection by id), then pairs of stream id and message id. Moves those live entries, with their
 * read state, to the archive; a mailbox left with no entry is removed. With '1', a message neither live nor archived
 * moves nothing and is returned: {-1, id}. Returns {moved, removed (1 or 0)}.
 */
export const ARCHIVE = new Script(`${FIELD}
local function live(i) return redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i])[1] end
if ARGV[2] == '1' then
  for i = 3, #ARGV, 2 do
    if not live(i) and redis.call('HEXISTS', KEYS[8], ARGV[i + 1]) == 0 then return {-1, ARGV[i + 1]} end
  end
end
local existed = redis.call('EXISTS', KEYS[1]) == 1
local moved = 0
for i = 3, #ARGV, 2 do
  local sid, id = ARGV[i], ARGV[i + 1]
  local entry = live(i)
  if entry then
    local read_at = redis.call('HGET', KEYS[2], sid) or ''
    local archived = redis.call('XADD', KEYS[7], '*', 'id', id, 'record', field(entry[2], 'record'), 'read_at', read_at)
    redis.call('HSET', KEYS[8], id, archived)
    redis.call('XDEL', KEYS[1], sid)
    redis.call('HDEL', KEYS[2], sid)
    redis.call('HDEL', KEYS[4], sid)
    if redis.call('HGET', KEYS[3], id) == sid then redis.call('HDEL', KEYS[3], id) end
    if read_at == '' then redis.call('HINCRBY', KEYS[6], ARGV[1], -1) end
    moved = moved + 1
  end
end
if moved > 0 then redis.call('SADD', KEYS[9], ARGV[1]) end
if existed and redis.call('XLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
  redis.call('HDEL', KEYS[6], ARGV[1])
  return {moved, 1}
end
return {moved, 0}
`);

/**
 * KEYS: arch, archids, archived. ARGV: mailbox, then pairs of stream id and message id. Deletes those archived
 * entries; an archive left empty is removed. Returns how many were deleted.
 */
export const PURGE = new Script(`
local purged = 0
for i = 2, #ARGV, 2 do
  purged = purged + redis.call('XDEL', KEYS[1], ARGV[i])
  if redis.call('HGET', KEYS[2], ARGV[i + 1]) == ARGV[i] then redis.call('HDEL', KEYS[2], ARGV[i + 1]) end
end
if redis.call('XLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[1])
end
return purged
`);

/**
 * KEYS: the lists key, the lists bell. ARGV: the JSON the caller read ('' for none), the JSON to store ('' for
 * none). Stores it only if the lists are still what the caller read, and rings the bell when they change. Returns
 * {1} or {0, what is stored now}: the caller changes that and tries again.
 */
export const REPLACE_LISTS = new Script(`
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then return {0, current} end
if ARGV[2] == current then return {1} end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
redis.call('XADD', KEYS[2], 'MAXLEN', '1', '*', 'changed', '1')
return {1}
`);

const DOCUMENT = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
local ok, decoded = false, nil
if old then ok, decoded = pcall(cjson.decode, old) end
local previous = (ok and type(decoded) == 'table') and decoded or nil
local doc = {}
if previous then for key, value in pairs(previous) do if type(value) == 'string' then doc[key] = value end end end
local PIN = {'window', 'server', 'pin_host', 'named_at'}
`;

/**
 * KEYS: agents. ARGV: name, status, pane, time (ISO 8601), this host, then window, server and pin host ('' for no
 * pin). Records an agent's availability: `since` kept while it is unchanged, a pin kept while the same pane writes
 * (status.ts). Returns the document.
 */
export const WRITE_STATUS = new Script(`${NOW}${DOCUMENT}
local kept_pin = previous and previous.pane == ARGV[3] and doc.named_at
doc.name = ARGV[1]
if doc.since == nil or doc.status ~= ARGV[2] then doc.since = ARGV[4] end
doc.status = ARGV[2]
doc.updated_at = ARGV[4]
doc.pane = ARGV[3]
doc.host = doc.host or ARGV[5]
doc.last_seen_ms = doc.last_seen_ms or string.format('%.0f', now)
if ARGV[6] ~= '' then
  doc.window, doc.server, doc.pin_host, doc.named_at = ARGV[6], ARGV[7], ARGV[8], ARGV[4]
elseif not kept_pin then
  for _, key in ipairs(PIN) do doc[key] = nil end
end
local encoded = cjson.encode(doc)
redis.call('HSET', KEYS[1], ARGV[1], encoded)
return encoded
`);

/**
 * KEYS: agents, moved. ARGV: name, host, pane, exclusive ms, time (ISO 8601). Records that an agent ran a command on a
 * host. Refused when the name ran on another host less than `exclusive ms` ago. An agent first seen here is ready;
 * a pin is dropped when another pane runs under the name. Returns {1, document} or {0, the other host's document}.
 */
export const TOUCH = new Script(`${notMoved(2)}${NOW}${DOCUMENT}
local exclusive = tonumber(ARGV[4])
if doc.host and doc.host ~= ARGV[2] and exclusive > 0 and now - (tonumber(doc.last_seen_ms) or 0) < exclusive then
  return {0, old}
end
doc.name = ARGV[1]
doc.host = ARGV[2]
doc.last_seen_ms = string.format('%.0f', now)
if doc.pane ~= ARGV[3] then
  for _, key in ipairs(PIN) do doc[key] = nil end
  doc.pane = ARGV[3]
end
if doc.status == nil then
  doc.status, doc.since, doc.updated_at = 'ready', ARGV[5], ARGV[5]
end
local encoded = cjson.encode(doc)
redis.call('HSET', KEYS[1], ARGV[1], encoded)
return {1, encoded}
`);

/** KEYS: lease hashes. How many of their leases have not run out: what a migrate waits for to reach zero. */
export const LIVE_LEASES = new Script(`${NOW}${LEASE}
local live = 0
for _, key in ipairs(KEYS) do
  for _, lease in ipairs(redis.call('HVALS', key)) do
    if lease_parts(lease) > now then live = live + 1 end
  end
end
return live
`);

/** KEYS: claims. The claims document ('' for none) and the server's time in ms: {document, now}. */
export const READ_CLAIMS = new Script(`${NOW}
return {redis.call('GET', KEYS[1]) or '', string.format('%.0f', now)}
`);

/**
 * KEYS: claims. ARGV: the document the caller read ('' for none), the document to store ('' for none). Stores it only
 * if the claims are still what the caller read, so a decision taken on them holds. Returns {1} or {0, the document
 * stored now, the server's time in ms}: the caller decides again on that.
 */
export const REPLACE_CLAIMS = new Script(`${NOW}
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then return {0, current, string.format('%.0f', now)} end
if ARGV[2] == current then return {1} end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return {1}
`);

/** Drops from the announced set (KEYS[announced]) the ids whose message was read or left (KEYS[ids], KEYS[read]). */
const pruneAnnounced = (announced: number, ids: number, read: number) => `
for _, id in ipairs(redis.call('HKEYS', KEYS[${announced}])) do
  local sid = redis.call('HGET', KEYS[${ids}], id)
  if not sid or redis.call('HEXISTS', KEYS[${read}], sid) == 1 then redis.call('HDEL', KEYS[${announced}], id) end
end
`;

/**
 * KEYS: delivery, announced, ids, read. ARGV: triples of message id, the event's JSON, and its effect on the
 * announced set ('+', '-' or '='). Appends each event; an id stays in the announced set only while its message is
 * live and unread (the others leave the set).
 */
export const RECORD_DELIVERY = new Script(`${pruneAnnounced(2, 3, 4)}
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  redis.call('XADD', KEYS[1], '*', 'event', ARGV[i + 1])
  local sid = redis.call('HGET', KEYS[3], id)
  if ARGV[i + 2] == '-' or not sid or redis.call('HEXISTS', KEYS[4], sid) == 1 then
    redis.call('HDEL', KEYS[2], id)
  elseif ARGV[i + 2] == '+' then
    redis.call('HSET', KEYS[2], id, '1')
  end
end
return 1
`);

/**
 * KEYS: ids, read, lease, announced, delivery. ARGV: pairs of message id and the event's JSON (an event that
 * announces). Records each event whose message is live, unread, not under a live lease (a receiver showing it) and
 * not announced, and adds it to the announced set; first drops the ids of messages read since. Returns the ids
 * recorded.
 */
export const ANNOUNCE = new Script(`${NOW}${LEASE}${pruneAnnounced(4, 1, 2)}
local claimed = {}
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  local sid = redis.call('HGET', KEYS[1], id)
  if sid and redis.call('HEXISTS', KEYS[2], sid) == 0 and redis.call('HEXISTS', KEYS[4], id) == 0 then
    local lease = redis.call('HGET', KEYS[3], sid)
    if not (lease and lease_parts(lease) > now) then
      redis.call('XADD', KEYS[5], '*', 'event', ARGV[i + 1])
      redis.call('HSET', KEYS[4], id, '1')
      claimed[#claimed + 1] = id
    end
  end
end
return claimed
`);
