/** What tests of either service share about requests and answers. */
import { type Hex, keccak256, stringToHex } from 'viem'

/** The fields of an error answer (both services' `Error` schema) that tests read. */
export type ErrorAnswer = { message: string; errorCode: string }

/** A fresh 32-byte id (request ids, memos, salts), unique per call. */
export function randomId(): Hex {
  return keccak256(stringToHex(`${Math.random()}-${Date.now()}`))
}
