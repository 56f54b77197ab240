import type { Logger } from '@pontis/core'
import { type Address, isHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

/**
 * Anvil's published test account #9. Only the `local` environment falls back to it, so the
 * embedded devnet starts with no set-up; every other environment must name its own key.
 */
const LOCAL_DEVELOPMENT_KEY = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6'

export interface SignerIdentity {
  readonly address: Address
  readonly module: 'raw-private-key'
}

/** Resolves the oracle's signer from `SIGNING_MODULE` and `ECDSA_PRIVATE_KEY`. The key is never logged. */
export function resolveSigner(env: NodeJS.ProcessEnv, environment: string, logger: Logger): SignerIdentity {
  const module = env.SIGNING_MODULE || 'raw-private-key'
  if (module !== 'raw-private-key') {
    throw new Error(`SIGNING_MODULE "${module}" is not supported by this build; use raw-private-key`)
  }
  let key = env.ECDSA_PRIVATE_KEY
  if (!key) {
    if (environment !== 'local')
      throw new Error('ECDSA_PRIVATE_KEY is required with SIGNING_MODULE=raw-private-key')
    logger.warn(
      'ECDSA_PRIVATE_KEY is not set: using the public local development key (local environment only)',
    )
    key = LOCAL_DEVELOPMENT_KEY
  }
  const normalized = key.startsWith('0x') ? key : `0x${key}`
  if (!isHex(normalized) || normalized.length !== 66) {
    throw new Error('ECDSA_PRIVATE_KEY must be 32 bytes of hex (64 hex characters, optional 0x prefix)')
  }
  return { address: privateKeyToAccount(normalized).address, module: 'raw-private-key' }
}
