/**
 * Principal component analysis for distillation: the covariance of the rows, its eigenvectors by
 * cyclic Jacobi rotations (exact to rounding for the symmetric matrices we meet: a few hundred
 * dimensions), and the centred rows projected on the leading components. Pure and deterministic:
 * the same input gives the same bytes, and each component's sign is fixed (its largest coordinate
 * is positive) so no platform detail can flip it.
 */

/** Eigenvalues in descending order and the matching unit eigenvectors. */
export interface SymmetricEigen {
  values: Float64Array;
  /** Row-major [n × n]: row i is the eigenvector of `values[i]`. */
  vectors: Float64Array;
}

/**
 * Eigen-decomposition of a symmetric row-major [n × n] matrix by cyclic Jacobi rotations.
 * Only the upper triangle's symmetry is assumed, not checked.
 */
export function symmetricEigen(matrix: ArrayLike<number>, n: number, maxSweeps = 60): SymmetricEigen {
  const a = Float64Array.from(matrix);
  // v is kept transposed (row k = eigenvector k) so each rotation touches two contiguous rows.
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  let scale = 0;
  for (let i = 0; i < n * n; i++) scale += a[i]! * a[i]!;
  const tolerance = scale * 1e-30;
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p * n + q]! * a[p * n + q]!;
    if (off <= tolerance) break;
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q]!;
        if (apq === 0) continue;
        const app = a[p * n + p]!;
        const aqq = a[q * n + q]!;
        // Already negligible next to both diagonal entries: zero it without rotating.
        if (sweep > 3 && Math.abs(apq) * 1e18 < Math.abs(app) && Math.abs(apq) * 1e18 < Math.abs(aqq)) {
          a[p * n + q] = 0;
          a[q * n + p] = 0;
          continue;
        }
        const theta = (aqq - app) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        // A ← Aᵀ-rotation: columns p and q, then rows p and q.
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p]!;
          const akq = a[k * n + q]!;
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        const rowP = p * n;
        const rowQ = q * n;
        for (let k = 0; k < n; k++) {
          const apk = a[rowP + k]!;
          const aqk = a[rowQ + k]!;
          a[rowP + k] = c * apk - s * aqk;
          a[rowQ + k] = s * apk + c * aqk;
          const vpk = v[rowP + k]!;
          const vqk = v[rowQ + k]!;
          v[rowP + k] = c * vpk - s * vqk;
          v[rowQ + k] = s * vpk + c * vqk;
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => a[y * n + y]! - a[x * n + x]! || x - y);
  const values = new Float64Array(n);
  const vectors = new Float64Array(n * n);
  order.forEach((from, to) => {
    values[to] = a[from * n + from]!;
    let largest = 0;
    for (let k = 0; k < n; k++) if (Math.abs(v[from * n + k]!) > Math.abs(v[from * n + largest]!)) largest = k;
    const sign = v[from * n + largest]! < 0 ? -1 : 1;
    for (let k = 0; k < n; k++) vectors[to * n + k] = sign * v[from * n + k]!;
  });
  return { values, vectors };
}

/** The result of {@link pca}. */
export interface PcaResult {
  /** Row-major [rows × components]: the centred rows in the component basis. */
  projected: Float64Array;
  /** Row-major [components × dimension]: unit principal axes, by decreasing variance. */
  components: Float64Array;
  /** Variance along each component (sample variance, n − 1). */
  variance: Float64Array;
  /** Share of the total variance the kept components explain. */
  explained: number;
  mean: Float64Array;
}

/**
 * Project row-major [rows × dimension] data on its `components` leading principal axes (as
 * scikit-learn's `PCA(n_components).fit_transform` does, up to each axis's sign).
 * Rows flagged in `skip` are left out of the fit and projected to zero.
 */
export function pca(data: ArrayLike<number>, rows: number, dimension: number, components: number, skip?: ReadonlySet<number>): PcaResult {
  const k = Math.min(components, dimension);
  const mean = new Float64Array(dimension);
  let used = 0;
  for (let r = 0; r < rows; r++) {
    if (skip?.has(r)) continue;
    used++;
    for (let d = 0; d < dimension; d++) mean[d]! += data[r * dimension + d]!;
  }
  for (let d = 0; d < dimension; d++) mean[d]! /= Math.max(1, used);
  const covariance = new Float64Array(dimension * dimension);
  const centred = new Float64Array(dimension);
  for (let r = 0; r < rows; r++) {
    if (skip?.has(r)) continue;
    for (let d = 0; d < dimension; d++) centred[d] = data[r * dimension + d]! - mean[d]!;
    for (let i = 0; i < dimension; i++) {
      const x = centred[i]!;
      if (x === 0) continue;
      const row = i * dimension;
      for (let j = i; j < dimension; j++) covariance[row + j]! += x * centred[j]!;
    }
  }
  const divisor = Math.max(1, used - 1);
  for (let i = 0; i < dimension; i++) {
    for (let j = i; j < dimension; j++) {
      const value = covariance[i * dimension + j]! / divisor;
      covariance[i * dimension + j] = value;
      covariance[j * dimension + i] = value;
    }
  }
  const { values, vectors } = symmetricEigen(covariance, dimension);
  const axes = vectors.slice(0, k * dimension);
  const projected = new Float64Array(rows * k);
  for (let r = 0; r < rows; r++) {
    if (skip?.has(r)) continue;
    for (let d = 0; d < dimension; d++) centred[d] = data[r * dimension + d]! - mean[d]!;
    for (let c = 0; c < k; c++) {
      let sum = 0;
      const axis = c * dimension;
      for (let d = 0; d < dimension; d++) sum += centred[d]! * axes[axis + d]!;
      projected[r * k + c] = sum;
    }
  }
  let total = 0;
  let kept = 0;
  values.forEach((value, i) => {
    total += Math.max(0, value);
    if (i < k) kept += Math.max(0, value);
  });
  return { projected, components: axes, variance: values.slice(0, k), explained: total > 0 ? kept / total : 1, mean };
}
