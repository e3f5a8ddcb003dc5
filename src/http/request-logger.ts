/**
 * Fastify gives every request a child logger bound to its request id. Making a pino child costs
 * real time per request (its bindings are serialised at once), and at the usual production level
 * (warn) almost no request ever logs. This factory hands out a stand-in that makes the real child
 * only when a line is written at an enabled level. Its methods live on the prototype, so the
 * stand-in is one small object per request. It plugs into Fastify's own `childLoggerFactory`
 * option, and is kept because `npm run bench` measured it: 6–11 µs of a Ping's ~60 µs of CPU
 * (docs/performance.md).
 */
import type { FastifyBaseLogger } from "fastify";
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from "pino";

type Level = "fatal" | "error" | "warn" | "info" | "debug" | "trace";
/** pino loggers can tell whether a level is on; for any other logger assume it is. */
type Logger = FastifyBaseLogger & { isLevelEnabled?(level: string): boolean };

const enabled = (logger: Logger, level: string) => logger.isLevelEnabled?.(level) ?? true;

class LazyChildLogger {
  private real: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private bindings: Bindings,
  ) {}

  /** Adds bindings for the lines still to come; free until one is written. */
  bind(more: Bindings): void {
    if (this.real) this.real = this.real.child(more);
    else this.bindings = { ...this.bindings, ...more };
  }

  private materialise(): Logger {
    return (this.real ??= this.parent.child(this.bindings));
  }

  private write(level: Level, args: unknown[]): void {
    if (!enabled(this.real ?? this.parent, level)) return;
    (this.materialise()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): LevelWithSilentOrString {
    return (this.real ?? this.parent).level;
  }

  set level(level: LevelWithSilentOrString) {
    this.materialise().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return enabled(this.real ?? this.parent, level);
  }

  fatal(...args: unknown[]): void {
    this.write("fatal", args);
  }
  error(...args: unknown[]): void {
    this.write("error", args);
  }
  warn(...args: unknown[]): void {
    this.write("warn", args);
  }
  info(...args: unknown[]): void {
    this.write("info", args);
  }
  debug(...args: unknown[]): void {
    this.write("debug", args);
  }
  trace(...args: unknown[]): void {
    this.write("trace", args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.materialise().child(bindings, options);
  }
}

/**
 * Binds more fields to a request's logger, e.g. its span's ids once the span is known (SPEC §17).
 * Each request's logger comes from lazyChildLoggerFactory; one with route-level log options is a
 * real child, which keeps its bindings.
 */
export function bindRequestLog(log: FastifyBaseLogger, more: Bindings): void {
  if (log instanceof LazyChildLogger) log.bind(more);
}

/** `childLoggerFactory` for Fastify: a request's logger that costs nothing until it logs. */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // Route-level log options (level, serializers) need a real child to take effect.
  if (Object.keys(options).length > 0) return logger.child(bindings, options);
  return new LazyChildLogger(logger, bindings) as unknown as FastifyBaseLogger;
}
