// REST client: bearer token kept in localStorage, errors surfaced as ApiError(code, message).

const TOKEN_KEY = "checkers.token";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let unauthorized = () => {};

/** Call `fn` when the server refuses the stored token (it expired or was revoked). */
export function onUnauthorized(fn) {
  unauthorized = fn;
}

export function getToken() {
  return localStorage.getItem(TOKEN_KEY);
}

export function setToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

/** Turn `{a: 1, b: undefined}` into `?a=1`, skipping empty values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** Call the REST API; JSON in and out. Throws ApiError with the server's code and message.
 * `token` defaults to the stored one. */
export async function request(method, path, body, token = getToken()) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, "network", "The server cannot be reached. Check your connection.");
  }
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json")
    ? await response.json().catch(() => null)
    : await response.text();
  if (!response.ok) {
    const code = (data && data.error) || "error";
    const message = (data && data.message) || `${response.status} ${response.statusText}`;
    if (response.status === 401 && token) {
      setToken(null);
      unauthorized();
    }
    throw new ApiError(response.status, code, message);
  }
  return data;
}

export const api = {
  get: (path) => request("GET", path),
  post: (path, body) => request("POST", path, body ?? {}),
  patch: (path, body) => request("PATCH", path, body ?? {}),
  put: (path, body) => request("PUT", path, body ?? {}),
  delete: (path) => request("DELETE", path),
};
