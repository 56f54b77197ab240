/**
 * Helpers the wallet adapters share: hex and base64 without Buffer (browser-safe), and a sleep for
 * the adapters that poll a node until their transaction is included.
 */

/** Base64 to bytes without Buffer (browser-safe). */
export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** Bytes to base64 without Buffer (browser-safe). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/**
 * Hex to bytes without Buffer (browser-safe): PSBTs and SVM instruction data as served (no prefix),
 * or 0x-prefixed hex.
 * @throws TypeError when `hex` is not an even number of hex digits.
 */
export function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const clean = hex.replace(/^0x/, '')
  if (clean.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(clean)) throw new TypeError('malformed hex')
  const bytes = new Uint8Array(new ArrayBuffer(clean.length / 2))
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(clean.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

/** Bytes to lower-case hex without a prefix. */
export function bytesToHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** Hex-encoded UTF-8 to text (nodes that answer their error messages hex-encoded). */
export function hexToText(hex: string): string {
  return new TextDecoder().decode(hexToBytes(hex))
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
