/**
 * The OTLP protobuf encoding of finished spans, as the exporter sends them (SPEC §17). It writes
 * the bytes `@opentelemetry/otlp-transformer`'s ProtobufTraceSerializer writes, byte for byte
 * (test/telemetry/otlp-encoding.test.ts holds it to that), at about a third of its cost: one pass
 * instead of a size estimate and then a write; short ASCII strings copied as they are checked,
 * longer ones by Buffer's UTF-8 coder; a span's lengths fixed up as its fields close. With every
 * request traced, that serializer was the largest part of a span's cost; docs/performance.md has
 * the figures.
 *
 * Field numbers are those of opentelemetry/proto/trace/v1/trace.proto and common/v1/common.proto.
 */
import type { Attributes, AttributeValue, HrTime, SpanContext } from "@opentelemetry/api";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace-node";

type Resource = ReadableSpan["resource"];
type Scope = ReadableSpan["instrumentationScope"];

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH = 2;
const WIRE_FIXED32 = 5;

/** OTLP's span flags: the W3C trace flags, and whether the parent (or link) is remote, and known to be. */
const FLAG_HAS_IS_REMOTE = 0x100;
const FLAG_IS_REMOTE = 0x200;

const TWO_POW_32 = 4294967296;
const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

const HEX_DIGIT = new Uint8Array(128);
for (let digit = 0; digit < 16; digit++) {
  HEX_DIGIT["0123456789abcdef".charCodeAt(digit)] = digit;
  HEX_DIGIT["0123456789ABCDEF".charCodeAt(digit)] = digit;
}

/** A growing buffer with protobuf's primitives; nested messages get their length when they end. */
class ProtobufBuffer {
  private bytes = Buffer.allocUnsafeSlow(64 * 1024);
  pos = 0;

  private ensure(more: number): void {
    if (this.pos + more <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.pos + more) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    this.bytes.copy(grown, 0, 0, this.pos);
    this.bytes = grown;
  }

  /**
   * What was written, in a buffer of its own: the exporter sends it while the next batch is
   * encoded. The next buffer is sized for a batch like this one, so it rarely grows.
   */
  take(): Uint8Array {
    const written = this.bytes.subarray(0, this.pos);
    this.bytes = Buffer.allocUnsafeSlow(Math.max(64 * 1024, Math.ceil(this.pos * 1.25)));
    this.pos = 0;
    return written;
  }

  tag(field: number, wireType: number): void {
    this.varint32((field << 3) | wireType);
  }

  varint32(value: number): void {
    this.ensure(5);
    let v = value >>> 0;
    while (v > 0x7f) {
      this.bytes[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.bytes[this.pos++] = v;
  }

  /** An int64 as a varint: negative numbers in two's complement, ten bytes. */
  varint64(value: number): void {
    if (value >= 0 && value < TWO_POW_32) return this.varint32(value);
    this.ensure(10);
    let low: number;
    let high: number;
    if (value >= 0) {
      low = value >>> 0;
      high = (value / TWO_POW_32) >>> 0;
    } else {
      const magnitude = -value;
      low = ~(magnitude >>> 0) >>> 0;
      high = ~((magnitude / TWO_POW_32) >>> 0) >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      this.bytes[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    this.bytes[this.pos++] = low;
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.pos = this.bytes.writeUInt32LE(value >>> 0, this.pos);
  }

  double(value: number): void {
    this.ensure(8);
    this.pos = this.bytes.writeDoubleLE(value, this.pos);
  }

  /**
   * An HrTime ([seconds, nanoseconds]) as nanoseconds since the epoch, fixed64. The product
   * seconds × 1e9 is past 2^53, so it is built from parts that stay exact.
   */
  hrTime(time: HrTime): void {
    const [seconds, nanos] = time;
    const lowSeconds = seconds % 65536;
    const highNanos = ((seconds - lowSeconds) / 65536) * 1e9;
    const highNanosLow16 = highNanos % 65536;
    // nanoseconds = highNanos × 2^16 + lowSeconds × 1e9 + nanos = (highNanos >> 16) × 2^32 + lowPart
    const lowPart = highNanosLow16 * 65536 + lowSeconds * 1e9 + nanos;
    const low = lowPart % TWO_POW_32;
    this.ensure(8);
    this.bytes.writeUInt32LE(low, this.pos);
    this.bytes.writeUInt32LE(((highNanos - highNanosLow16) / 65536 + (lowPart - low) / TWO_POW_32) >>> 0, this.pos + 4);
    this.pos += 8;
  }

  /** Opens a length-delimited field; one byte is kept for its length, which most fit. */
  open(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Closes the field opened at `start`, moving its content along when the length needs more than a byte. */
  close(start: number): void {
    const length = this.pos - start - 1;
    if (length < 0x80) {
      this.bytes[start] = length;
      return;
    }
    const lengthBytes = length < 0x4000 ? 2 : length < 0x200000 ? 3 : length < 0x10000000 ? 4 : 5;
    this.ensure(lengthBytes - 1);
    this.bytes.copyWithin(start + lengthBytes, start + 1, this.pos);
    this.pos += lengthBytes - 1;
    let v = length;
    let at = start;
    while (v > 0x7f) {
      this.bytes[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.bytes[at] = v;
  }

  string(field: number, value: string): void {
    this.tag(field, WIRE_LENGTH);
    // At most three bytes per UTF-16 unit, and five for the length.
    this.ensure(value.length * 3 + 5);
    const start = this.open();
    const length = value.length;
    if (length <= 32) {
      const bytes = this.bytes;
      let at = this.pos;
      let i = 0;
      for (; i < length; i++) {
        const code = value.charCodeAt(i);
        if (code > 0x7f) break;
        bytes[at++] = code;
      }
      if (i === length) {
        this.pos = at;
        this.close(start);
        return;
      }
    }
    this.pos += this.bytes.write(value, this.pos, "utf8");
    this.close(start);
  }

  /** Bytes given as hexadecimal, as trace and span ids are. */
  hex(field: number, value: string): void {
    this.tag(field, WIRE_LENGTH);
    const length = value.length >>> 1;
    this.varint32(length);
    this.ensure(length);
    const bytes = this.bytes;
    let at = this.pos;
    for (let i = 0; i < value.length; i += 2) bytes[at++] = (HEX_DIGIT[value.charCodeAt(i)]! << 4) | HEX_DIGIT[value.charCodeAt(i + 1)]!;
    this.pos = at;
  }

  bytesField(field: number, value: Uint8Array): void {
    this.tag(field, WIRE_LENGTH);
    this.varint32(value.length);
    this.ensure(value.length);
    this.bytes.set(value, this.pos);
    this.pos += value.length;
  }
}

function writeAnyValue(out: ProtobufBuffer, value: AttributeValue | Record<string, unknown> | null | undefined): void {
  if (typeof value === "string") {
    out.string(1, value);
  } else if (typeof value === "boolean") {
    out.tag(2, WIRE_VARINT);
    out.varint32(value ? 1 : 0);
  } else if (typeof value === "number") {
    if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
      out.tag(3, WIRE_VARINT);
      out.varint64(value);
    } else {
      out.tag(4, WIRE_FIXED64);
      out.double(value);
    }
  } else if (value instanceof Uint8Array) {
    out.bytesField(7, value);
  } else if (Array.isArray(value)) {
    out.tag(5, WIRE_LENGTH);
    const array = out.open();
    for (const item of value) {
      out.tag(1, WIRE_LENGTH);
      const entry = out.open();
      writeAnyValue(out, item);
      out.close(entry);
    }
    out.close(array);
  } else if (typeof value === "object" && value !== null) {
    out.tag(6, WIRE_LENGTH);
    const list = out.open();
    writeKeyValues(out, 1, value as Record<string, AttributeValue>);
    out.close(list);
  }
  // Anything else (undefined, a function) is an empty value, as the serializer leaves it.
}

/** Attributes as repeated KeyValue {key = 1, value = 2} in field `field`. */
function writeKeyValues(out: ProtobufBuffer, field: number, attributes: Attributes | Record<string, unknown>): void {
  for (const key of Object.keys(attributes)) {
    out.tag(field, WIRE_LENGTH);
    const keyValue = out.open();
    out.string(1, key);
    out.tag(2, WIRE_LENGTH);
    const value = out.open();
    writeAnyValue(out, attributes[key] as AttributeValue);
    out.close(value);
    out.close(keyValue);
  }
}

function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | FLAG_HAS_IS_REMOTE | (isRemote ? FLAG_IS_REMOTE : 0);
}

function writeEvent(out: ProtobufBuffer, event: TimedEvent): void {
  out.tag(11, WIRE_LENGTH);
  const start = out.open();
  out.tag(1, WIRE_FIXED64);
  out.hrTime(event.time);
  out.string(2, event.name);
  if (event.attributes) writeKeyValues(out, 3, event.attributes);
  out.tag(4, WIRE_VARINT);
  out.varint32(event.droppedAttributesCount ?? 0);
  out.close(start);
}

function writeLink(out: ProtobufBuffer, link: ReadableSpan["links"][number]): void {
  out.tag(13, WIRE_LENGTH);
  const start = out.open();
  const context: SpanContext = link.context;
  out.hex(1, context.traceId);
  out.hex(2, context.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) out.string(3, traceState);
  if (link.attributes) writeKeyValues(out, 4, link.attributes);
  out.tag(5, WIRE_VARINT);
  out.varint32(link.droppedAttributesCount ?? 0);
  out.tag(6, WIRE_FIXED32);
  out.fixed32(spanFlags(context.traceFlags, context.isRemote));
  out.close(start);
}

function writeSpan(out: ProtobufBuffer, span: ReadableSpan): void {
  out.tag(2, WIRE_LENGTH);
  const start = out.open();
  const context = span.spanContext();
  out.hex(1, context.traceId);
  out.hex(2, context.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) out.string(3, traceState);
  const parent = span.parentSpanContext;
  if (parent?.spanId) out.hex(4, parent.spanId);
  out.string(5, span.name);
  // OTLP's kinds count from 1: 0 is "unspecified", which the API has no value for.
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) {
    out.tag(6, WIRE_VARINT);
    out.varint32(kind);
  }
  out.tag(7, WIRE_FIXED64);
  out.hrTime(span.startTime);
  out.tag(8, WIRE_FIXED64);
  out.hrTime(span.endTime);
  writeKeyValues(out, 9, span.attributes);
  out.tag(10, WIRE_VARINT);
  out.varint32(span.droppedAttributesCount);
  for (const event of span.events) writeEvent(out, event);
  out.tag(12, WIRE_VARINT);
  out.varint32(span.droppedEventsCount);
  for (const link of span.links) writeLink(out, link);
  out.tag(14, WIRE_VARINT);
  out.varint32(span.droppedLinksCount);
  out.tag(15, WIRE_LENGTH);
  const status = out.open();
  if (span.status.message) out.string(2, span.status.message);
  out.tag(3, WIRE_VARINT);
  out.varint32(span.status.code);
  out.close(status);
  out.tag(16, WIRE_FIXED32);
  out.fixed32(spanFlags(context.traceFlags, parent?.isRemote));
  out.close(start);
}

function writeScope(out: ProtobufBuffer, scope: Scope): void {
  out.tag(1, WIRE_LENGTH);
  const start = out.open();
  out.string(1, scope.name);
  if (scope.version) out.string(2, scope.version);
  const withAttributes = scope as Scope & { attributes?: Attributes; droppedAttributesCount?: number };
  if (withAttributes.attributes) writeKeyValues(out, 3, withAttributes.attributes);
  if (withAttributes.droppedAttributesCount) {
    out.tag(4, WIRE_VARINT);
    out.varint32(withAttributes.droppedAttributesCount);
  }
  out.close(start);
}

function writeResource(out: ProtobufBuffer, resource: Resource): void {
  out.tag(1, WIRE_LENGTH);
  const start = out.open();
  writeKeyValues(out, 1, resource.attributes);
  out.tag(2, WIRE_VARINT);
  out.varint32(0);
  out.close(start);
}

/** Spans grouped by resource, then by instrumentation scope, each in the order first seen. */
function groupSpans(spans: ReadableSpan[]): Map<Resource, Map<Scope, ReadableSpan[]>> {
  const byResource = new Map<Resource, Map<Scope, ReadableSpan[]>>();
  for (const span of spans) {
    let byScope = byResource.get(span.resource);
    if (!byScope) byResource.set(span.resource, (byScope = new Map()));
    let group = byScope.get(span.instrumentationScope);
    if (!group) byScope.set(span.instrumentationScope, (group = []));
    group.push(span);
  }
  return byResource;
}

/** Encodes spans as an ExportTraceServiceRequest. */
export class OtlpSpanEncoder {
  private readonly out = new ProtobufBuffer();

  encode(spans: ReadableSpan[]): Uint8Array {
    const out = this.out;
    for (const [resource, byScope] of groupSpans(spans)) {
      // ExportTraceServiceRequest.resource_spans = 1
      out.tag(1, WIRE_LENGTH);
      const resourceSpans = out.open();
      writeResource(out, resource);
      for (const [scope, group] of byScope) {
        // ResourceSpans.scope_spans = 2
        out.tag(2, WIRE_LENGTH);
        const scopeSpans = out.open();
        writeScope(out, scope);
        for (const span of group) writeSpan(out, span);
        if (scope.schemaUrl) out.string(3, scope.schemaUrl);
        out.close(scopeSpans);
      }
      if (resource.schemaUrl) out.string(3, resource.schemaUrl);
      out.close(resourceSpans);
    }
    return out.take();
  }
}
