import { type Static, Type } from 'typebox';

/**
 * Every setting and its default, in one place. The YAML file named by MODELGATE_CONFIG
 * overrides these; MODELGATE_* environment variables override the file (see load-config.ts).
 */
const Obj = <T extends Parameters<typeof Type.Object>[0]>(props: T) =>
  Type.Object(props, { additionalProperties: false, default: {} });

/** The longest string V8 makes (a body past it could not be read as text anyway). */
const MAX_STRING_BYTES = 536_870_888;

const ChannelDecl = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    kind: Type.String({ minLength: 1 }),
    base_url: Type.Optional(Type.String()),
    keys: Type.Array(Type.String(), { default: [] }),
    models: Type.Array(Type.String(), { default: [] }),
    model_mapping: Type.Record(Type.String(), Type.String(), { default: {} }),
    priority: Type.Integer({ default: 0 }),
    weight: Type.Integer({ minimum: 1, default: 1 }),
    status: Type.Integer({ minimum: 1, maximum: 2, default: 1 }),
    settings: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  },
  { additionalProperties: false },
);

const ModelDecl = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    name: Type.Optional(Type.String()),
    context_length: Type.Optional(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    pricing: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]))),
    input_modalities: Type.Optional(Type.Array(Type.String())),
    output_modalities: Type.Optional(Type.Array(Type.String())),
    supported_parameters: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: true },
);

/** The SQLite file a gateway, or a CLI command, opens when no database is configured. */
export const DEFAULT_DATABASE_URL = './data/modelgate.db';

export const ConfigSchema = Obj({
  server: Obj({
    host: Type.String({ default: '127.0.0.1' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
    /** Public URL printed at start and used in links; derived from host/port when empty. */
    public_url: Type.String({ default: '' }),
    /** Every route but `/v1` (body-limits.ts): the management API needs far less. */
    body_limit_bytes: Type.Integer({ minimum: 1024, default: 1024 * 1024 }),
    /**
     * Chat requests (`/v1/chat/completions`, `/v1/messages`, `/v1/responses`) carry base64 images
     * and PDFs in the conversation: 32 MiB, Anthropic's own limit for a Messages request.
     */
    chat_body_limit_bytes: Type.Integer({ minimum: 1024, default: 32 * 1024 * 1024 }),
    /** Embedding requests carry base64 images (20 MB each), so they get a larger cap. */
    embedding_body_limit_bytes: Type.Integer({ minimum: 1024, default: 64 * 1024 * 1024 }),
    /**
     * Which proxies' `X-Forwarded-For` to believe for the client's address (per-address limits,
     * logs): false = none (the socket's peer is the client); a string = the proxies' addresses or
     * CIDR ranges, comma-separated (`loopback`, `linklocal`, `uniquelocal` name the private
     * ranges); true = every hop, which lets any client write its own address unless the proxy in
     * front replaces the header. (Fastify treats a hop count as "trust none", so none is offered.)
     */
    trust_proxy: Type.Union([Type.Boolean(), Type.String({ minLength: 1 })], { default: false }),
    shutdown_grace_ms: Type.Integer({ minimum: 0, default: 15_000 }),
    serve_console: Type.Boolean({ default: true }),
    /** The built console to serve; empty = the one built into this install (web/dist). */
    console_dir: Type.String({ default: '' }),
    /**
     * V8 lets the old generation grow by this share of what survived the last major GC before
     * the next one (`--heap-growing-percent`); 0 = V8's own factor, up to 300% on a large machine.
     */
    heap_growing_percent: Type.Integer({ minimum: 0, maximum: 300, default: 50 }),
    /**
     * Origins whose pages may call `/v1` (and read the public catalog) from a browser: `*` = any,
     * else exact origins (`https://app.example.com`) and subdomain patterns
     * (`https://*.example.com`); empty (or `none`) = CORS off. The API takes keys in headers,
     * never cookies, so `*` lends a page nothing its user did not paste into it
     * (docs/architecture.md, "Browser clients (CORS)").
     */
    cors_origins: Type.Array(Type.String(), { default: ['*'] }),
  }),
  database: Obj({
    /** A file path (SQLite) or a postgres:// URL. */
    url: Type.String({ default: DEFAULT_DATABASE_URL }),
    pool_size: Type.Integer({ minimum: 1, default: 10 }),
    /**
     * PostgreSQL: the server cancels a statement running (or waiting for a lock) longer than this;
     * 0 = the server's own setting. Migrations run without it.
     */
    statement_timeout_ms: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 30_000 }),
    /** PostgreSQL: how long a query waits for a pool connection (or a new one to open); 0 = forever. */
    connect_timeout_ms: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 10_000 }),
    /**
     * SQLite: the page cache of the gateway's connection, in MB (`cache_size`). The request log's
     * inserts touch only the right edge of its b-trees; other reads come from the OS's page cache.
     */
    sqlite_cache_mb: Type.Integer({ minimum: 1, maximum: 65_536, default: 2 }),
  }),
  redis: Obj({
    url: Type.String({ default: '' }),
    key_prefix: Type.String({ default: 'mg:' }),
  }),
  auth: Obj({
    root_password: Type.String({ default: '' }),
    session_ttl_hours: Type.Integer({ minimum: 1, default: 168 }),
    /** 'auto' sets Secure on the cookie when the request came over https. */
    cookie_secure: Type.Union([Type.Literal('auto'), Type.Boolean()], { default: 'auto' }),
    credential_cache_ms: Type.Integer({ minimum: 0, maximum: 1000, default: 1000 }),
    /**
     * Sign-in attempts a minute per client address (`POST /api/user/login`, right or wrong), a
     * burst of that many then one every 60/n seconds; 0 = no limit. Each attempt costs ~90 ms
     * of scrypt on the libuv pool, so it also bounds what one address can make the server do.
     */
    login_rate_per_minute: Type.Integer({ minimum: 0, default: 20 }),
    /**
     * Writes to /api (POST, PUT, PATCH, DELETE by a signed-in user or an access token) a minute
     * per user, a burst of that many then one every 60/n seconds; 0 = no limit. Bounds what a
     * stolen session or token can create (keys, tokens, users, apps). Reads and /v1 are not counted.
     */
    api_write_rate_per_minute: Type.Integer({ minimum: 0, default: 120 }),
  }),
  log: Obj({
    level: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { default: 'info' },
    ),
    request_logs_flush_ms: Type.Integer({ minimum: 10, default: 500 }),
    request_logs_batch: Type.Integer({ minimum: 1, maximum: 10_000, default: 200 }),
  }),
  catalog: Obj({
    seed: Type.Boolean({ default: true }),
    search_rate_per_minute: Type.Integer({ minimum: 0, default: 30 }),
  }),
  limits: Obj({
    /** Requests a minute per user across all their keys; 0 = none. Per-key limits are on the key. */
    user_rpm: Type.Integer({ minimum: 0, default: 0 }),
    /** Requests a minute per client address on anonymous catalog routes (not search); 0 = none. */
    catalog_ip_rpm: Type.Integer({ minimum: 0, default: 0 }),
  }),
  metrics: Obj({
    enabled: Type.Boolean({ default: true }),
    /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
    token: Type.String({ default: '' }),
  }),
  gateway: Obj({
    default_model: Type.String({ default: '' }),
    /** Model for embedding requests that name none; empty means such requests are a 400. */
    default_embedding_model: Type.String({ default: '' }),
    connect_timeout_ms: Type.Integer({ minimum: 1, default: 10_000 }),
    first_byte_timeout_ms: Type.Integer({ minimum: 1, default: 120_000 }),
    /**
     * A non-streamed chat call's wait for its answer: the upstream sends its headers only once the
     * whole answer is generated (a long Claude answer takes minutes), so the first byte's 120 s
     * would cut it and pay for a retry. The longer of the two applies.
     */
    non_stream_timeout_ms: Type.Integer({ minimum: 1, default: 600_000 }),
    idle_timeout_ms: Type.Integer({ minimum: 1, default: 60_000 }),
    /**
     * A stream's wait, once the upstream sent its finish, for its terminator and trailing events
     * (the usage chunk): past it the stream ends cleanly instead of waiting for the idle timeout.
     */
    finish_grace_ms: Type.Integer({ minimum: 1, default: 3_000 }),
    /**
     * The largest upstream answer read whole (non-streamed chat, model listings, channel tests);
     * a larger one is a bad upstream answer (502, next upstream), and is not read past this.
     */
    max_response_bytes: Type.Integer({ minimum: 1024, maximum: MAX_STRING_BYTES, default: 64 * 1024 * 1024 }),
    /**
     * The same for one embeddings answer (one batch): 2,048 vectors of 3,072 floats as JSON with
     * one value per line, as OpenAI lays them out, are well over 100 MB.
     */
    max_embedding_response_bytes: Type.Integer({
      minimum: 1024,
      maximum: MAX_STRING_BYTES,
      default: 256 * 1024 * 1024,
    }),
    /**
     * What is kept of an upstream's error body (any status but 2xx) for its message; past it the
     * connection is closed instead of reading the rest.
     */
    max_error_body_bytes: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, default: 64 * 1024 }),
    /**
     * The largest single event of a streamed upstream answer (one SSE event, or a line still
     * arriving); a larger one is a bad upstream answer (502, next upstream before the first byte,
     * in-band error after it). Counted in characters of the decoded text, at most its bytes.
     */
    max_stream_event_bytes: Type.Integer({
      minimum: 1024,
      maximum: MAX_STRING_BYTES,
      default: 16 * 1024 * 1024,
    }),
    keep_alive_interval_ms: Type.Integer({ minimum: 100, default: 15_000 }),
    /**
     * A streaming client that leaves what was written for it untaken this long is disconnected
     * (its upstream request ends; logged 499, billed for what was generated); so is a client that
     * frees no room in its full socket for this long after a non-streamed answer; 0 = never.
     */
    client_stall_ms: Type.Integer({ minimum: 0, default: 120_000 }),
    max_attempts: Type.Integer({ minimum: 1, default: 3 }),
    retry_base_ms: Type.Integer({ minimum: 0, default: 200 }),
    retry_max_ms: Type.Integer({ minimum: 0, default: 5_000 }),
    circuit_failures: Type.Integer({ minimum: 1, default: 5 }),
    circuit_window_ms: Type.Integer({ minimum: 1, default: 60_000 }),
    circuit_cooldown_ms: Type.Integer({ minimum: 1, default: 30_000 }),
    /** How often upstream keys set aside after a 401/403 are probed again; 0 = never. */
    key_probe_interval_ms: Type.Integer({ minimum: 0, default: 300_000 }),
    discover_models: Type.Boolean({ default: true }),
    /**
     * How often the channels' model listings are read again (with `discover_models`), jittered
     * and shared by the instances on one database; 0 = only at start, on a change and on an
     * explicit refresh. At most a week.
     */
    discovery_interval_ms: Type.Integer({ minimum: 0, maximum: 604_800_000, default: 3_600_000 }),
    image_fetch_timeout_ms: Type.Integer({ minimum: 1, default: 10_000 }),
    /** All the image fetches of one embeddings request together (each has image_fetch_timeout_ms). */
    image_fetch_total_timeout_ms: Type.Integer({ minimum: 1, default: 60_000 }),
    image_allow_hosts: Type.Array(Type.String(), { default: [] }),
  }),
  channels: Type.Array(ChannelDecl, { default: [] }),
  models: Type.Array(ModelDecl, { default: [] }),
});

export type Config = Static<typeof ConfigSchema>;
export type ChannelDeclaration = Static<typeof ChannelDecl>;
export type ModelDeclaration = Static<typeof ModelDecl>;

/** Paths whose values are secrets: never echoed in errors or logs. */
export const SECRET_PATHS = new Set(['auth.root_password', 'redis.url', 'database.url', 'metrics.token']);
