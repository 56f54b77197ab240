/**
 * `Authorization: Bearer <token>` checks for operator tokens (the intent service's ADMIN_TOKEN, the
 * oracle's METRICS_TOKEN): one parser, one constant-time comparison.
 */
import crypto from 'node:crypto'

/** What a request presented: no bearer credential, the wrong one, or the configured token. */
export type BearerVerdict = 'missing' | 'wrong' | 'ok'

const sha256 = (text: string): Buffer => crypto.createHash('sha256').update(text, 'utf8').digest()
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i

/**
 * A checker of the `Authorization` header against `token`. Both sides are hashed first, so the
 * comparison takes the same time whatever was sent (timingSafeEqual needs equal lengths; hashing
 * gives them) and says nothing about how much of the token a guess got right.
 */
export function createBearerCheck(token: string): (authorization: string | undefined) => BearerVerdict {
  if (token === '') throw new TypeError('a bearer token cannot be empty')
  const expected = sha256(token)
  return (authorization) => {
    const presented = BEARER.exec(authorization ?? '')?.[1]
    if (presented === undefined) return 'missing'
    // Through the module object, so a test can observe that the comparison happens.
    return crypto.timingSafeEqual(sha256(presented), expected) ? 'ok' : 'wrong'
  }
}
