import { describe, expect, it } from 'vitest';
import {
  float16ToNumber,
  numberToFloat16,
  parseSafetensors,
  tensorToFloat32,
  tensorToFloat64,
  tensorToInt32,
  writeSafetensors,
} from '../../src/embed/safetensors.js';

describe('safetensors', () => {
  it('round-trips every dtype through the writer and reader', () => {
    const values = [0, 1, -2, 3, 100, -100];
    const bytes = writeSafetensors(
      {
        f64: { dtype: 'F64', shape: [2, 3], data: values.map((v) => v + 0.1) },
        f32: { dtype: 'F32', shape: [6], data: values.map((v) => v / 3) },
        f16: { dtype: 'F16', shape: [3, 2], data: values.map((v) => v / 4) },
        bf16: { dtype: 'BF16', shape: [6], data: values },
        i64: { dtype: 'I64', shape: [6], data: values },
        i32: { dtype: 'I32', shape: [6], data: values },
        i16: { dtype: 'I16', shape: [6], data: values },
        i8: { dtype: 'I8', shape: [6], data: values },
        u8: { dtype: 'U8', shape: [6], data: values.map(Math.abs) },
      },
      { format: 'pt' },
    );
    const file = parseSafetensors(bytes);
    expect(file.metadata).toEqual({ format: 'pt' });
    expect(file.tensors.get('f16')).toMatchObject({ dtype: 'F16', shape: [3, 2] });
    expect(Array.from(tensorToFloat64(file, 'f64'))).toEqual(values.map((v) => v + 0.1));
    expect(Array.from(tensorToFloat32(file, 'f32'))).toEqual(values.map((v) => Math.fround(v / 3)));
    expect(Array.from(tensorToFloat32(file, 'f16'))).toEqual(values.map((v) => v / 4));
    expect(Array.from(tensorToFloat32(file, 'bf16'))).toEqual(values);
    for (const name of ['i64', 'i32', 'i16', 'i8']) expect(Array.from(tensorToInt32(file, name)), name).toEqual(values);
    expect(Array.from(tensorToFloat32(file, 'u8'))).toEqual(values.map(Math.abs));
    // The header is padded so the data section starts 8-byte aligned.
    expect((bytes.byteLength - file.data.byteLength) % 8).toBe(0);
  });

  it('converts half precision both ways, rounding to nearest even', () => {
    for (const value of [0, -0, 1, -1.5, 65504, 6.103515625e-5, 5.960464477539063e-8, Infinity, -Infinity]) {
      expect(float16ToNumber(numberToFloat16(value))).toBe(value);
    }
    expect(Number.isNaN(float16ToNumber(numberToFloat16(NaN)))).toBe(true);
    expect(float16ToNumber(numberToFloat16(1 + 2 ** -11))).toBe(1); // tie → even
    expect(float16ToNumber(numberToFloat16(1 + 3 * 2 ** -11))).toBe(1 + 2 ** -9);
    expect(float16ToNumber(numberToFloat16(1e6))).toBe(Infinity);
  });

  it('rejects malformed files with the reason', () => {
    expect(() => parseSafetensors(new Uint8Array(4), 'x.safetensors')).toThrow(/x\.safetensors .*8-byte/);
    const huge = new Uint8Array(16);
    new DataView(huge.buffer).setBigUint64(0, 1000n, true);
    expect(() => parseSafetensors(huge)).toThrow(/exceeds the file size/);
    const notJson = new Uint8Array([4, 0, 0, 0, 0, 0, 0, 0, 123, 123, 123, 123]);
    expect(() => parseSafetensors(notJson)).toThrow(/not JSON/);
    const good = writeSafetensors({ t: { dtype: 'F32', shape: [2], data: [1, 2] } });
    expect(() => parseSafetensors(good.subarray(0, good.byteLength - 1))).toThrow(/does not fit/);
    expect(() => tensorToFloat32(parseSafetensors(good), 'missing')).toThrow(/no tensor named missing/);
    expect(() => tensorToInt32(parseSafetensors(good), 't')).toThrow(/expected an integer dtype/);
    expect(() => writeSafetensors({ t: { dtype: 'F32', shape: [3], data: [1] } })).toThrow(/needs 3 values/);
  });
});
