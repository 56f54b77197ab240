import type { IncomingHttpHeaders } from 'node:http'
import { ConfigError } from '@pontis/core'

/**
 * Where the deployment's own URLs (icons) start: `PUBLIC_BASE_URL` when the operator sets it (an
 * http(s) origin, optionally with a path prefix, e.g. `https://pontis.example.com/api`), else the
 * origin the request was sent to: `Host`, or behind a trusted proxy (`TRUST_PROXY=true`) the
 * first `X-Forwarded-Proto` and `X-Forwarded-Host` the proxy set.
 */
export type PublicBaseUrl = (headers: IncomingHttpHeaders) => string

/** A host as it may appear in a URL: a name, IPv4 or bracketed IPv6, with an optional port. */
const HOST_PATTERN = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(:[0-9]{1,5})?$/

/** Used only when the request names no usable host (HTTP/1.0 without `Host`). */
const LAST_RESORT_HOST = 'localhost'

/**
 * `PUBLIC_BASE_URL` checked: an absolute http(s) URL without query, fragment or credentials;
 * the trailing slash is dropped.
 * @throws ConfigError naming the variable.
 */
export function checkPublicBaseUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL is not a URL; expected https://<host>[:<port>][/<prefix>]`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`PUBLIC_BASE_URL must be an http:// or https:// URL, got a ${url.protocol}// URL`)
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new ConfigError('PUBLIC_BASE_URL must not carry a query, a fragment or credentials')
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '')
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  const first = value?.split(',', 1)[0]?.trim()
  return first === '' ? undefined : first
}

export function publicBaseUrlResolver(options: {
  readonly publicBaseUrl?: string | undefined
  readonly trustProxy: boolean
}): PublicBaseUrl {
  const configured = options.publicBaseUrl
  if (configured !== undefined) return () => configured
  return (headers) => {
    const forwardedHost = options.trustProxy ? firstValue(headers['x-forwarded-host']) : undefined
    const forwardedProto = options.trustProxy
      ? firstValue(headers['x-forwarded-proto'])?.toLowerCase()
      : undefined
    const candidate = forwardedHost ?? firstValue(headers.host)
    const host = candidate !== undefined && HOST_PATTERN.test(candidate) ? candidate : LAST_RESORT_HOST
    const scheme = forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : 'http'
    return `${scheme}://${host}`
  }
}
