/**
 * Reading JSON-RPC parameters: positional values and the trailing config object, each checked so a
 * bad request gets a -32602 error that names the parameter instead of a crash.
 */
import { PublicKey } from '@solana/web3.js'
import bs58 from 'bs58'
import { invalidParams } from './errors.js'
import type { Commitment } from './ledger.js'

/** A request's positional parameters. */
export type Params = readonly unknown[]

/** A config object (the optional last parameter of most methods). */
export type Config = Readonly<Record<string, unknown>>

/** The bytes `text` spells in base58, or undefined when it is not base58. */
export function base58Bytes(text: string): Uint8Array | undefined {
  try {
    return bs58.decode(text)
  } catch {
    return undefined
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** Parameter `index` as a string. */
export function stringParam(params: Params, index: number, name: string): string {
  const value = params[index]
  if (typeof value !== 'string')
    throw invalidParams(`${name} (params[${index}]) must be a string, got ${describe(value)}`)
  return value
}

/** A base58 public key, from parameter `index` or any value (`where` names it in errors). */
export function publicKeyValue(value: unknown, where: string): PublicKey {
  if (typeof value !== 'string' || base58Bytes(value)?.length !== 32) {
    throw invalidParams(`${where} must be a base58 public key, got ${describe(value)}`)
  }
  return new PublicKey(value)
}

/** Parameter `index` as a base58 public key. */
export function publicKeyParam(params: Params, index: number, name: string): PublicKey {
  return publicKeyValue(params[index], `${name} (params[${index}])`)
}

/** A base58 transaction signature. */
export function signatureValue(value: unknown, where: string): string {
  if (typeof value !== 'string' || base58Bytes(value)?.length !== 64) {
    throw invalidParams(`${where} must be a base58 signature, got ${describe(value)}`)
  }
  return value
}

/** Parameter `index` as a non-negative safe integer. */
export function integerParam(params: Params, index: number, name: string): number {
  const value = params[index]
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidParams(`${name} (params[${index}]) must be a non-negative integer, got ${describe(value)}`)
  }
  return value
}

/** Parameter `index` as an array. */
export function arrayParam(
  params: Params,
  index: number,
  name: string,
  maxLength: number,
): readonly unknown[] {
  const value = params[index]
  if (!Array.isArray(value))
    throw invalidParams(`${name} (params[${index}]) must be an array, got ${describe(value)}`)
  if (value.length > maxLength) {
    throw invalidParams(
      `${name} (params[${index}]) holds ${value.length} entries, more than the maximum of ${maxLength}`,
    )
  }
  return value
}

/** The config object at `index` (empty when absent or null). */
export function configParam(params: Params, index: number): Config {
  const value = params[index]
  if (value === undefined || value === null) return {}
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidParams(`the config (params[${index}]) must be an object, got ${describe(value)}`)
  }
  return value as Config
}

const COMMITMENTS: Readonly<Record<string, Commitment>> = {
  processed: 'processed',
  confirmed: 'confirmed',
  finalized: 'finalized',
  // Deprecated names older clients still send.
  recent: 'processed',
  single: 'confirmed',
  singleGossip: 'confirmed',
  root: 'finalized',
  max: 'finalized',
}

/** `config.commitment` (or `config[key]`), `finalized` when absent as on the real RPC. */
export function commitmentOf(config: Config, key = 'commitment'): Commitment {
  const value = config[key]
  if (value === undefined || value === null) return 'finalized'
  const commitment = typeof value === 'string' ? COMMITMENTS[value] : undefined
  if (!commitment) {
    throw invalidParams(`${key} must be one of processed, confirmed, finalized, got ${describe(value)}`)
  }
  return commitment
}

/** `config[key]` as one of `allowed`, or `fallback` when absent. */
export function enumOf<T extends string>(config: Config, key: string, allowed: readonly T[], fallback: T): T {
  const value = config[key]
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw invalidParams(`${key} must be one of ${allowed.join(', ')}, got ${describe(value)}`)
  }
  return value as T
}

/** `config[key]` as a boolean, `fallback` when absent. */
export function booleanOf(config: Config, key: string, fallback: boolean): boolean {
  const value = config[key]
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'boolean') throw invalidParams(`${key} must be a boolean, got ${describe(value)}`)
  return value
}

/** `config[key]` as a non-negative safe integer, undefined when absent. */
export function integerOf(config: Config, key: string): number | undefined {
  const value = config[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidParams(`${key} must be a non-negative integer, got ${describe(value)}`)
  }
  return value
}

/** `config[key]` as a nested config object, undefined when absent. */
export function objectOf(config: Config, key: string): Config | undefined {
  const value = config[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidParams(`${key} must be an object, got ${describe(value)}`)
  }
  return value as Config
}

/** `config.dataSlice` ({ offset, length }), undefined when absent. */
export function dataSliceOf(config: Config): { offset: number; length: number } | undefined {
  const slice = objectOf(config, 'dataSlice')
  if (!slice) return undefined
  const offset = integerOf(slice, 'offset')
  const length = integerOf(slice, 'length')
  if (offset === undefined || length === undefined) throw invalidParams('dataSlice needs offset and length')
  return { offset, length }
}
