/** The part of autocannon 9's programmatic API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  interface AutocannonOptions {
    url: string
    method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
    headers?: Record<string, string>
    body?: string
    connections?: number
    /** Seconds. */
    duration?: number
    pipelining?: number
    /** Seconds before a request counts as a timeout. */
    timeout?: number
    /** Called with every answer's body; false counts the answer as a mismatch. */
    verifyBody?: (body: string) => boolean
  }

  interface AutocannonStats {
    mean: number
    stddev: number
    min: number
    max: number
    p50: number
    p99: number
    p99_9: number
  }

  interface AutocannonResult {
    /** Seconds. */
    duration: number
    errors: number
    timeouts: number
    mismatches: number
    non2xx: number
    resets: number
    statusCodeStats: Record<string, { count: number }>
    requests: AutocannonStats & { total: number; sent: number }
    latency: AutocannonStats & { totalCount: number }
  }

  /** Emits `response` (client, statusCode, bytes, responseTimeMs) for every answer. */
  interface AutocannonInstance extends EventEmitter {
    stop(): void
  }

  function autocannon(
    options: AutocannonOptions,
    callback: (error: Error | null, result: AutocannonResult) => void,
  ): AutocannonInstance

  export type { AutocannonInstance, AutocannonOptions, AutocannonResult }
  export default autocannon
}
