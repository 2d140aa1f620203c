import type { FastifyBaseLogger } from 'fastify';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Bindings = Record<string, unknown>;
type LogFn = (...args: unknown[]) => void;

/**
 * A request's logger that becomes a real pino child only when something is logged at an enabled
 * level. Fastify makes a child per request (its bindings are serialized and redacted at once);
 * most requests log nothing at production levels, so that work was wasted on each of them.
 */
class LazyChildLogger {
  private real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly opts: object,
  ) {}

  private get realChild(): FastifyBaseLogger {
    this.real ??= this.parent.child(this.bindings, this.opts);
    return this.real;
  }

  get level(): string {
    return this.real?.level ?? this.parent.level;
  }

  set level(l: string) {
    this.realChild.level = l;
  }

  private at(level: Level, args: unknown[]): void {
    if (!enabled(this.parent, level)) return;
    (this.realChild[level] as LogFn)(...args);
  }

  fatal(...args: unknown[]) {
    this.at('fatal', args);
  }
  error(...args: unknown[]) {
    this.at('error', args);
  }
  warn(...args: unknown[]) {
    this.at('warn', args);
  }
  info(...args: unknown[]) {
    this.at('info', args);
  }
  debug(...args: unknown[]) {
    this.at('debug', args);
  }
  trace(...args: unknown[]) {
    this.at('trace', args);
  }
  silent() {}

  child(bindings: Bindings, opts?: object): FastifyBaseLogger {
    return this.realChild.child(bindings, opts);
  }

  isLevelEnabled(level: string): boolean {
    return enabled(this.parent, level);
  }
}

function enabled(logger: FastifyBaseLogger, level: string): boolean {
  const l = logger as FastifyBaseLogger & { isLevelEnabled?(level: string): boolean };
  return l.isLevelEnabled ? l.isLevelEnabled(level) : true;
}

/** Fastify `childLoggerFactory`: request loggers made on first use. */
export function lazyChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  opts: object,
): FastifyBaseLogger {
  // A route with its own `logLevel` gets a real child: the parent's level does not decide for it.
  if ((opts as { level?: string }).level !== undefined) return logger.child(bindings, opts);
  return new LazyChildLogger(logger, bindings, opts) as unknown as FastifyBaseLogger;
}
