/**
 * The page's calls to the intent service, on the page's own origin. The credential (the
 * operator's ADMIN_TOKEN or the partner's API key) lives in this module's memory only: never in a
 * URL, a cookie or browser storage, so closing or reloading the tab signs out, and no other site
 * can make the browser send it (no ambient credential, hence nothing to forge: no CSRF). Every call
 * is an ordinary API call, rate limited and logged like any other client's.
 */

/** Who signed in, and with what. */
export type Role = 'operator' | 'partner'

interface Session {
  readonly role: Role
  readonly credential: string
}

let session: Session | undefined

/** One answer: status, parsed JSON body, and the headers the page reads (rate limits). */
export interface Answer<T> {
  readonly status: number
  readonly body: T
  readonly headers: Headers
}

/** A refused call, with the service's message and error code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string | undefined,
    message: string,
  ) {
    super(message)
  }
}

function credentialHeaders(target: Session): Record<string, string> {
  return target.role === 'operator'
    ? { authorization: `Bearer ${target.credential}` }
    : { 'x-api-key': target.credential }
}

async function send<T>(target: Session, method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...credentialHeaders(target) }
  if (body !== undefined) headers['content-type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      // Credentials travel in headers only; no cookie is ever sent or stored.
      credentials: 'omit',
      cache: 'no-store',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  } catch {
    throw new ApiError(0, undefined, 'The service did not answer. Check that it is running, then try again.')
  }
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = text
  }
  if (!response.ok) {
    const error = parsed as { message?: unknown; errorCode?: unknown } | undefined
    const retry = response.headers.get('retry-after')
    const message =
      typeof error?.message === 'string' ? error.message : `The service answered ${response.status}`
    throw new ApiError(
      response.status,
      typeof error?.errorCode === 'string' ? error.errorCode : undefined,
      retry ? `${message} (retry in ${retry} s)` : message,
    )
  }
  return { status: response.status, body: parsed as T, headers: response.headers }
}

/** Checks a credential with a call only it may make, and keeps it for this page's life if it works. */
export async function signIn(role: Role, credential: string): Promise<void> {
  const candidate = { role, credential: credential.trim() }
  await send(candidate, 'GET', role === 'operator' ? '/admin/keys' : '/partner/key')
  session = candidate
}

/** Forgets the credential. */
export function signOut(): void {
  session = undefined
}

/** A call with the signed-in credential. */
export function api<T>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  if (!session) return Promise.reject(new ApiError(401, 'UNAUTHORIZED', 'Sign in first'))
  return send<T>(session, method, path, body)
}

/** `RateLimit: "other";r=199;t=42` → remaining 199, reset in 42 s. */
export function parseRateLimit(
  header: string | null,
): { remaining: number; resetSeconds: number } | undefined {
  const match = header?.match(/;r=(\d+);t=(\d+)/)
  if (!match) return undefined
  return { remaining: Number(match[1]), resetSeconds: Number(match[2]) }
}
