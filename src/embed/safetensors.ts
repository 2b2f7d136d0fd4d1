/**
 * Reader and writer for the safetensors format (https://github.com/huggingface/safetensors):
 * an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and byte
 * range, then the raw little-endian data. Only what static embedders need: whole-file parsing and
 * conversion of a tensor to Float32Array / Int32Array.
 */
import { CairnError } from '../errors.js';

export const SAFETENSORS_DTYPES = ['F64', 'F32', 'F16', 'BF16', 'I64', 'I32', 'I16', 'I8', 'U8'] as const;
export type SafetensorsDtype = (typeof SAFETENSORS_DTYPES)[number];

const DTYPE_BYTES: Record<SafetensorsDtype, number> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
};

/** Refuse absurd headers before parsing them (the reference implementation caps at 100 MB). */
const MAX_HEADER_BYTES = 100_000_000;

export interface TensorInfo {
  dtype: SafetensorsDtype;
  shape: number[];
  /** Byte range inside the data section, end exclusive. */
  begin: number;
  end: number;
}

export interface SafetensorsFile {
  tensors: Map<string, TensorInfo>;
  /** The optional `__metadata__` string map. */
  metadata: Record<string, string>;
  /** The data section (everything after the header). */
  data: Uint8Array;
}

function malformed(source: string, why: string): CairnError {
  return new CairnError('INVALID_INPUT', `${source} is not a valid safetensors file: ${why}`);
}

function isDtype(value: unknown): value is SafetensorsDtype {
  return typeof value === 'string' && (SAFETENSORS_DTYPES as readonly string[]).includes(value);
}

/**
 * Parse a whole safetensors file held in memory. `source` names the file in error messages.
 * The returned tensors view `bytes`; nothing is copied.
 */
export function parseSafetensors(bytes: Uint8Array, source = 'safetensors'): SafetensorsFile {
  if (bytes.byteLength < 8) throw malformed(source, 'shorter than its 8-byte header length');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > MAX_HEADER_BYTES || 8 + headerLength > bytes.byteLength) {
    throw malformed(source, `header length ${headerLength} exceeds the file size ${bytes.byteLength}`);
  }
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  } catch (cause) {
    throw new CairnError('INVALID_INPUT', `${source} is not a valid safetensors file: header is not JSON`, { cause });
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw malformed(source, 'header is not a JSON object');
  }
  const data = bytes.subarray(8 + headerLength);
  const tensors = new Map<string, TensorInfo>();
  let metadata: Record<string, string> = {};
  for (const [name, entry] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (entry !== null && typeof entry === 'object') metadata = entry as Record<string, string>;
      continue;
    }
    const { dtype, shape, data_offsets: offsets } = (entry ?? {}) as Record<string, unknown>;
    if (!isDtype(dtype)) throw malformed(source, `tensor ${name} has unsupported dtype ${String(dtype)}`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw malformed(source, `tensor ${name} has an invalid shape`);
    }
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isInteger(o) && o >= 0)) {
      throw malformed(source, `tensor ${name} has invalid data_offsets`);
    }
    const [begin, end] = offsets as [number, number];
    const elements = (shape as number[]).reduce((a, b) => a * b, 1);
    if (end < begin || end > data.byteLength || end - begin !== elements * DTYPE_BYTES[dtype]) {
      throw malformed(source, `tensor ${name} (${dtype} [${shape.join(', ')}]) does not fit its byte range ${begin}..${end}`);
    }
    tensors.set(name, { dtype, shape: shape as number[], begin, end });
  }
  return { tensors, metadata, data };
}

function tensorBytes(file: SafetensorsFile, name: string): { info: TensorInfo; bytes: Uint8Array; view: DataView } {
  const info = file.tensors.get(name);
  if (!info) throw new CairnError('INVALID_INPUT', `safetensors file has no tensor named ${name}`);
  const bytes = file.data.subarray(info.begin, info.end);
  return { info, bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Decode IEEE half-precision bits to a number. */
export function float16ToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** Encode a number as IEEE half-precision bits, rounding to nearest even. */
export function numberToFloat16(value: number): number {
  const f32 = new Float32Array([value]);
  const bits = new Uint32Array(f32.buffer)[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    let half = mantissa >> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mantissa >> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++;
  return sign | half;
}

/**
 * A tensor's values as float32, whatever its stored dtype (integers are converted as they are,
 * without any scale). Float32 data that is suitably aligned is viewed, not copied.
 */
export function tensorToFloat32(file: SafetensorsFile, name: string): Float32Array {
  const { info, bytes, view } = tensorBytes(file, name);
  const count = bytes.byteLength / DTYPE_BYTES[info.dtype];
  if (info.dtype === 'F32' && LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) {
    return new Float32Array(bytes.buffer, bytes.byteOffset, count);
  }
  const out = new Float32Array(count);
  switch (info.dtype) {
    case 'F32':
      for (let i = 0; i < count; i++) out[i] = view.getFloat32(i * 4, true);
      break;
    case 'F64':
      for (let i = 0; i < count; i++) out[i] = view.getFloat64(i * 8, true);
      break;
    case 'F16': {
      const table = new Float32Array(65_536);
      for (let bits = 0; bits < 65_536; bits++) table[bits] = float16ToNumber(bits);
      for (let i = 0; i < count; i++) out[i] = table[view.getUint16(i * 2, true)]!;
      break;
    }
    case 'BF16': {
      const word = new Uint32Array(1);
      const asFloat = new Float32Array(word.buffer);
      for (let i = 0; i < count; i++) {
        word[0] = view.getUint16(i * 2, true) << 16;
        out[i] = asFloat[0]!;
      }
      break;
    }
    case 'I64':
      for (let i = 0; i < count; i++) out[i] = Number(view.getBigInt64(i * 8, true));
      break;
    case 'I32':
      for (let i = 0; i < count; i++) out[i] = view.getInt32(i * 4, true);
      break;
    case 'I16':
      for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true);
      break;
    case 'I8':
      for (let i = 0; i < count; i++) out[i] = view.getInt8(i);
      break;
    case 'U8':
      for (let i = 0; i < count; i++) out[i] = view.getUint8(i);
      break;
  }
  return out;
}

/** A tensor's values as float64 (for per-token weights, which the reference keeps in double). */
export function tensorToFloat64(file: SafetensorsFile, name: string): Float64Array {
  const { info, view } = tensorBytes(file, name);
  if (info.dtype === 'F64') {
    const out = new Float64Array((info.end - info.begin) / 8);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat64(i * 8, true);
    return out;
  }
  return Float64Array.from(tensorToFloat32(file, name));
}

/** An integer tensor's values as int32 (token-to-row mappings). */
export function tensorToInt32(file: SafetensorsFile, name: string): Int32Array {
  const { info, view } = tensorBytes(file, name);
  const count = (info.end - info.begin) / DTYPE_BYTES[info.dtype];
  const out = new Int32Array(count);
  switch (info.dtype) {
    case 'I32':
      for (let i = 0; i < count; i++) out[i] = view.getInt32(i * 4, true);
      return out;
    case 'I64':
      for (let i = 0; i < count; i++) {
        const value = view.getBigInt64(i * 8, true);
        if (value > 0x7fffffffn || value < -0x80000000n) {
          throw new CairnError('INVALID_INPUT', `tensor ${name} holds a value out of int32 range`);
        }
        out[i] = Number(value);
      }
      return out;
    case 'I16':
      for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true);
      return out;
    case 'I8':
      for (let i = 0; i < count; i++) out[i] = view.getInt8(i);
      return out;
    case 'U8':
      for (let i = 0; i < count; i++) out[i] = view.getUint8(i);
      return out;
    default:
      throw new CairnError('INVALID_INPUT', `tensor ${name} is ${info.dtype}, expected an integer dtype`);
  }
}

export interface TensorInput {
  dtype: SafetensorsDtype;
  shape: number[];
  /** Values in row-major order; converted to `dtype` (floats rounded, integers truncated). */
  data: ArrayLike<number>;
}

/**
 * Serialise tensors to safetensors bytes (header padded with spaces to 8-byte alignment, tensors
 * laid out in the order given). Used for test fixtures and distilled models.
 */
export function writeSafetensors(tensors: Record<string, TensorInput>, metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata) header['__metadata__'] = metadata;
  let offset = 0;
  const layout: Array<[TensorInput, number]> = [];
  for (const [name, tensor] of Object.entries(tensors)) {
    const elements = tensor.shape.reduce((a, b) => a * b, 1);
    if (elements !== tensor.data.length) {
      throw new CairnError('INVALID_INPUT', `tensor ${name}: shape [${tensor.shape.join(', ')}] needs ${elements} values, got ${tensor.data.length}`);
    }
    const size = elements * DTYPE_BYTES[tensor.dtype];
    header[name] = { dtype: tensor.dtype, shape: tensor.shape, data_offsets: [offset, offset + size] };
    layout.push([tensor, offset]);
    offset += size;
  }
  let json = JSON.stringify(header);
  const encoder = new TextEncoder();
  while (encoder.encode(json).byteLength % 8 !== 0) json += ' ';
  const headerBytes = encoder.encode(json);
  const out = new Uint8Array(8 + headerBytes.byteLength + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.byteLength), true);
  out.set(headerBytes, 8);
  const base = 8 + headerBytes.byteLength;
  for (const [tensor, start] of layout) {
    const width = DTYPE_BYTES[tensor.dtype];
    for (let i = 0; i < tensor.data.length; i++) {
      const at = base + start + i * width;
      const value = tensor.data[i]!;
      switch (tensor.dtype) {
        case 'F64': view.setFloat64(at, value, true); break;
        case 'F32': view.setFloat32(at, value, true); break;
        case 'F16': view.setUint16(at, numberToFloat16(value), true); break;
        case 'BF16': {
          const bits = new Uint32Array(new Float32Array([value]).buffer)[0]!;
          view.setUint16(at, bits >>> 16, true);
          break;
        }
        case 'I64': view.setBigInt64(at, BigInt(Math.trunc(value)), true); break;
        case 'I32': view.setInt32(at, value, true); break;
        case 'I16': view.setInt16(at, value, true); break;
        case 'I8': view.setInt8(at, value); break;
        case 'U8': view.setUint8(at, value); break;
      }
    }
  }
  return out;
}
