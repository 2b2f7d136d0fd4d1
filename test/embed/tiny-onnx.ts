/**
 * A hand-encoded ONNX model for transformers.js tests: one Gather node that looks the input ids
 * up in an embedding table, so `last_hidden_state` is the token rows and mean pooling gives the
 * same vectors as the static embedder over the same table.
 */

function varint(value: number | bigint): number[] {
  let v = BigInt(value);
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, value: number) => [...key(field, 0), ...varint(value)];
const bytes = (field: number, data: ArrayLike<number>) => [...key(field, 2), ...varint(data.length), ...Array.from(data)];
const text = (field: number, value: string) => bytes(field, new TextEncoder().encode(value));
const message = (field: number, parts: number[]) => bytes(field, parts);

const FLOAT = 1;
const INT64 = 7;

function tensorType(elemType: number, dims: Array<number | string>): number[] {
  const shape = dims.flatMap((d) => message(1, typeof d === 'number' ? int(1, d) : text(2, d)));
  return message(1, [...int(1, elemType), ...message(2, shape)]);
}

const valueInfo = (field: number, name: string, elemType: number, dims: Array<number | string>) =>
  message(field, [...text(1, name), ...message(2, tensorType(elemType, dims))]);

/** ONNX bytes of `last_hidden_state = Gather(table, input_ids)`; `table` is [rows × dimension]. */
export function gatherEmbeddingModel(table: number[], rows: number, dimension: number): Uint8Array {
  const raw = new Uint8Array(new Float32Array(table).buffer);
  const initializer = message(5, [...int(1, rows), ...int(1, dimension), ...int(2, FLOAT), ...text(8, 'table'), ...bytes(9, raw)]);
  const node = message(1, [...text(1, 'table'), ...text(1, 'input_ids'), ...text(2, 'last_hidden_state'), ...text(3, 'lookup'), ...text(4, 'Gather'), ...message(5, [...text(1, 'axis'), ...int(3, 0), ...int(20, 2)])]);
  const graph = [
    ...node,
    ...text(2, 'tiny'),
    ...initializer,
    ...valueInfo(11, 'input_ids', INT64, ['batch', 'sequence']),
    ...valueInfo(11, 'attention_mask', INT64, ['batch', 'sequence']),
    ...valueInfo(12, 'last_hidden_state', FLOAT, ['batch', 'sequence', dimension]),
  ];
  return new Uint8Array([...int(1, 8), ...text(2, 'cairn-test'), ...message(7, graph), ...message(8, [...text(1, ''), ...int(2, 13)])]);
}
