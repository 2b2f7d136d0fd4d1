// The page's only way to the server: JSON over fetch, with the token header on every request
// (the cookie authenticates; the header proves the request came from this page).

const token = document.querySelector('meta[name="cairn-token"]')?.content ?? '';
const header = document.querySelector('meta[name="cairn-token-header"]')?.content || 'X-Cairn-Token';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? 'INTERNAL';
    this.field = body?.error?.field ?? null;
  }
}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)) continue;
    search.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function request(method, path, { params, body, signal } = {}) {
  const res = await fetch(`/api${path}${query(params)}`, {
    method,
    headers: { [header]: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal,
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export const api = {
  get: (path, params, signal) => request('GET', path, { params, signal }),
  post: (path, body = {}) => request('POST', path, { body }),
  put: (path, body) => request('PUT', path, { body }),
  patch: (path, body) => request('PATCH', path, { body }),
};

/** Ids are path segments: keep them intact whatever they contain. */
export const seg = (id) => encodeURIComponent(id);
