/**
 * A memory's token signature: the compact, stored form of its word pieces' contextual states, so
 * recall's rerank (src/recall/rerank.ts) compares a query with its first hits word by word without
 * running the model on the hits. The states come from the very model run that computes the
 * memory's vector (the embedding text: the memory's text, then the words it answers); only the
 * pieces of the memory's own text are kept, at most {@link SIGNATURE_MAX_PIECES}, each as the signs
 * of its dimensions (one bit each: 48 bytes a piece for a 384-dimension model).
 *
 * Chosen offline on LoCoMo's tuning half (docs/EMBEDDINGS.md, "Token signatures"): the signs kept
 * the rerank's gain (evidence recall@5 0.739 with float states run on the turn alone, 0.739 with
 * these signs) where int8, float32 of the same run and seeded random projections to 64–256
 * dimensions did no better.
 *
 * Layout: byte 0 the format version (1), byte 1 reserved (0), bytes 2–3 the model's dimension and
 * 4–5 the piece count (little-endian u16), then each piece's dimension bits, dimension d at bit
 * d % 8 of byte d / 8.
 */

/** The format version in byte 0. */
export const SIGNATURE_VERSION = 1;
/**
 * Pieces kept a memory: the first ones of its text. 256 is MiniLM's whole input: at 64, long
 * memories (SciFact's abstracts) were judged by their first sentence and SciFact nDCG@10 fell
 * 0.733 → 0.709 (docs/EMBEDDINGS.md, "Token signatures").
 */
export const SIGNATURE_MAX_PIECES = 256;
const HEADER = 6;

/** The signature of `states` (each one piece's state; need not be unit length). */
export function encodeSignature(states: readonly Float32Array[], dimension: number): Uint8Array {
  const pieces = Math.min(states.length, SIGNATURE_MAX_PIECES);
  const stride = Math.ceil(dimension / 8);
  const out = new Uint8Array(HEADER + pieces * stride);
  out[0] = SIGNATURE_VERSION;
  out[2] = dimension & 0xff;
  out[3] = dimension >> 8;
  out[4] = pieces & 0xff;
  out[5] = pieces >> 8;
  for (let p = 0; p < pieces; p++) {
    const state = states[p]!;
    const base = HEADER + p * stride;
    for (let d = 0; d < dimension; d++) if (state[d]! >= 0) out[base + (d >> 3)]! |= 1 << (d & 7);
  }
  return out;
}

/** A decoded signature: `pieces` pieces of `dimension` sign bits, `stride` bytes each, from `offset`. */
export interface TokenSignature {
  dimension: number;
  pieces: number;
  stride: number;
  bytes: Uint8Array;
  offset: number;
}

/**
 * Read a stored signature, or a one-line reason it cannot be read (another version, another
 * dimension, a length that does not match its header: truncated or corrupt).
 */
export function decodeSignature(blob: Uint8Array, dimension: number): TokenSignature | string {
  if (blob.length < HEADER) return `${blob.length} bytes, shorter than its header`;
  if (blob[0] !== SIGNATURE_VERSION) return `format version ${blob[0]}, expected ${SIGNATURE_VERSION}`;
  const dims = blob[2]! | (blob[3]! << 8);
  if (dims !== dimension) return `${dims} dimensions, the model has ${dimension}`;
  const pieces = blob[4]! | (blob[5]! << 8);
  const stride = Math.ceil(dims / 8);
  if (pieces > SIGNATURE_MAX_PIECES || blob.length !== HEADER + pieces * stride) {
    return `${blob.length} bytes for ${pieces} pieces of ${dims} dimensions (truncated or corrupt)`;
  }
  return { dimension: dims, pieces, stride, bytes: blob, offset: HEADER };
}

/**
 * The query's side of {@link signatureScore}, computed once a recall: for each query piece and
 * each byte of a signature piece, the sum of the query's dimensions over every pattern of set
 * bits (256 a byte), so a signature piece costs one lookup a byte instead of one step a bit.
 */
export interface QueryTables {
  dimension: number;
  stride: number;
  /** Per query piece: `stride × 256` partial sums. */
  sums: Float32Array[];
  /** Per query piece: the sum of all its dimensions. */
  totals: number[];
}

/** {@link QueryTables} for `query` (unit-length states of the query's pieces). */
export function queryTables(query: readonly Float32Array[], dimension: number): QueryTables {
  const stride = Math.ceil(dimension / 8);
  const sums: Float32Array[] = [];
  const totals: number[] = [];
  for (const q of query) {
    const table = new Float32Array(stride * 256);
    let total = 0;
    for (let byte = 0; byte < stride; byte++) {
      const base = byte * 256;
      for (let pattern = 1; pattern < 256; pattern++) {
        // The pattern without its lowest set bit, plus that bit's dimension.
        const low = 31 - Math.clz32(pattern & -pattern);
        const d = (byte << 3) + low;
        table[base + pattern] = table[base + (pattern & (pattern - 1))]! + (d < dimension ? q[d]! : 0);
      }
    }
    for (let d = 0; d < dimension; d++) total += q[d]!;
    sums.push(table);
    totals.push(total);
  }
  return { dimension, stride, sums, totals };
}

/**
 * Late interaction against a signature: the mean, over the query's pieces, of the best
 * `q · sign(piece) / √dimension` over the signature's pieces (q · s = 2 · (the sum of q where the
 * bit is set) − the sum of q). 0 when either side has no piece.
 */
export function signatureScore(query: QueryTables, signature: TokenSignature): number {
  const { pieces, bytes, offset } = signature;
  const { stride, sums, totals } = query;
  if (sums.length === 0 || pieces === 0 || signature.stride !== stride) return 0;
  let sum = 0;
  for (let j = 0; j < sums.length; j++) {
    const table = sums[j]!;
    let best = -Infinity;
    for (let p = 0; p < pieces; p++) {
      const base = offset + p * stride;
      let set = 0;
      for (let byte = 0; byte < stride; byte++) set += table[(byte << 8) + bytes[base + byte]!]!;
      if (set > best) best = set;
    }
    sum += 2 * best - totals[j]!;
  }
  return sum / sums.length / Math.sqrt(query.dimension);
}
