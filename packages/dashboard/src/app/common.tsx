/** What both views share: loading states, the webhook form, the events table, the one-time secret. */
import type { ApiKeyWebhook, WebhookEventState } from '@pontis/generated/intents/types'
import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks'
import { ApiError } from './api.js'

/** The state of one load: the data, or why it failed, and a way to load again. */
export interface Loaded<T> {
  readonly data: T | undefined
  readonly error: string | undefined
  readonly loading: boolean
  reload(): Promise<void>
}

export function messageOf(error: unknown): string {
  return error instanceof ApiError || error instanceof Error ? error.message : String(error)
}

/** Loads with `load` now and on every `reload()`; the last data stays shown while reloading. */
export function useLoad<T>(load: () => Promise<T>): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [loading, setLoading] = useState(true)
  const current = useRef(load)
  current.current = load
  const reload = useCallback(async () => {
    setLoading(true)
    try {
      setData(await current.current())
      setError(undefined)
    } catch (caught) {
      setError(messageOf(caught))
    } finally {
      setLoading(false)
    }
  }, [])
  useEffect(() => {
    void reload()
  }, [reload])
  return { data, error, loading, reload }
}

/** Calls `tick` every `ms` while the page is visible. */
export function useInterval(tick: () => void, ms: number): void {
  const current = useRef(tick)
  current.current = tick
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') current.current()
    }, ms)
    return () => clearInterval(timer)
  }, [ms])
}

/** A titled region; `aria-busy` while it loads. */
export function Section(props: {
  readonly title: string
  readonly id: string
  readonly busy?: boolean
  readonly children: ComponentChildren
}) {
  return (
    <section aria-labelledby={`${props.id}-title`} aria-busy={props.busy ? 'true' : 'false'} id={props.id}>
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      {props.children}
    </section>
  )
}

/** Loading, error and empty states of a load, or `children(data)`. */
export function Status<T>(props: {
  readonly loaded: Loaded<T>
  readonly what: string
  readonly empty?: (data: T) => boolean
  readonly children: (data: T) => ComponentChildren
}) {
  const { data, error, loading } = props.loaded
  return (
    <>
      {error !== undefined && (
        <p role="alert" class="error">
          Could not load {props.what}: {error}{' '}
          <button type="button" class="link" onClick={() => void props.loaded.reload()}>
            Try again
          </button>
        </p>
      )}
      {data === undefined && loading && (
        <p role="status" class="muted">
          Loading {props.what}…
        </p>
      )}
      {data !== undefined && props.empty?.(data) && <p class="muted empty">No {props.what} yet.</p>}
      {data !== undefined && !props.empty?.(data) && props.children(data)}
    </>
  )
}

/** A line that says what just happened (a live region, read out by screen readers). */
export function Notice(props: { readonly notice: { text: string; error: boolean } | undefined }) {
  return (
    <p role={props.notice?.error ? 'alert' : 'status'} class={props.notice?.error ? 'error' : 'notice'}>
      {props.notice?.text ?? ''}
    </p>
  )
}

/** Runs an action and reports its outcome as a notice; `busy` while it runs. */
export function useAction(): {
  busy: boolean
  notice: { text: string; error: boolean } | undefined
  run(action: () => Promise<string>): Promise<void>
} {
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState<{ text: string; error: boolean } | undefined>(undefined)
  const run = async (action: () => Promise<string>) => {
    setBusy(true)
    try {
      setNotice({ text: await action(), error: false })
    } catch (error) {
      setNotice({ text: messageOf(error), error: true })
    } finally {
      setBusy(false)
    }
  }
  return { busy, notice, run }
}

export const formatTime = (ms: number | string): string => new Date(ms).toLocaleString()

/** `0x1234…cdef` */
export const short = (value: string): string =>
  value.length > 14 ? `${value.slice(0, 6)}…${value.slice(-4)}` : value

/** A webhook as the form edits it: headers as rows. */
interface HeaderRow {
  readonly name: string
  readonly value: string
}

/**
 * The webhook form of a key: URL, custom headers (rows), enabled. `save` gets the document's
 * `ApiKeyWebhookUpdate` body.
 */
export function WebhookForm(props: {
  readonly webhook: ApiKeyWebhook | null
  readonly save: (body: { enabled: boolean; url: string; headers?: Record<string, string> }) => Promise<void>
  readonly idPrefix: string
}) {
  const [url, setUrl] = useState(props.webhook?.url ?? '')
  const [enabled, setEnabled] = useState(props.webhook?.enabled ?? true)
  const [rows, setRows] = useState<HeaderRow[]>(
    Object.entries(props.webhook?.headers ?? {}).map(([name, value]) => ({ name, value })),
  )
  const action = useAction()
  const id = props.idPrefix
  const setRow = (index: number, row: HeaderRow) => setRows(rows.map((old, at) => (at === index ? row : old)))
  const submit = (event: Event) => {
    event.preventDefault()
    const headers = Object.fromEntries(
      rows.filter((row) => row.name.trim() !== '').map((row) => [row.name.trim(), row.value]),
    )
    void action.run(async () => {
      await props.save({
        enabled,
        url: url.trim(),
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
      })
      return enabled ? 'Webhook saved and enabled.' : 'Webhook saved and disabled.'
    })
  }
  return (
    <form onSubmit={submit} class="stack" aria-label="Webhook">
      <label for={`${id}-url`}>Webhook URL</label>
      <input
        id={`${id}-url`}
        type="url"
        required
        placeholder="https://hooks.example.com/pontis"
        value={url}
        onInput={(event) => setUrl(event.currentTarget.value)}
        autocomplete="off"
      />
      <fieldset>
        <legend>Custom headers (sent with every event)</legend>
        {rows.length === 0 && <p class="muted">No custom headers.</p>}
        {rows.map((row, index) => (
          <div class="row" key={index}>
            <label for={`${id}-header-name-${index}`} class="visually-hidden">
              Header {index + 1} name
            </label>
            <input
              id={`${id}-header-name-${index}`}
              placeholder="X-Header-Name"
              value={row.name}
              onInput={(event) => setRow(index, { ...row, name: event.currentTarget.value })}
              autocomplete="off"
            />
            <label for={`${id}-header-value-${index}`} class="visually-hidden">
              Header {index + 1} value
            </label>
            <input
              id={`${id}-header-value-${index}`}
              placeholder="value"
              value={row.value}
              onInput={(event) => setRow(index, { ...row, value: event.currentTarget.value })}
              autocomplete="off"
            />
            <button
              type="button"
              class="secondary"
              onClick={() => setRows(rows.filter((_, at) => at !== index))}
            >
              Remove header {index + 1}
            </button>
          </div>
        ))}
        <button type="button" class="secondary" onClick={() => setRows([...rows, { name: '', value: '' }])}>
          Add a header
        </button>
      </fieldset>
      <label class="check">
        <input
          type="checkbox"
          checked={enabled}
          onChange={(event) => setEnabled(event.currentTarget.checked)}
        />
        Deliver events (enabled)
      </label>
      <div>
        <button type="submit" disabled={action.busy}>
          Save webhook
        </button>
      </div>
      <Notice notice={action.notice} />
    </form>
  )
}

/** Where an event stands, in words. */
function eventOutcome(event: WebhookEventState): string {
  if (event.state === 'pending')
    return event.attempts === 0 ? 'queued' : `retry at ${formatTime(event.nextAttemptAt)}`
  if (event.state === 'delivered') return 'delivered'
  if (event.state === 'dead') return 'dead letter (gave up)'
  return 'dead letter (webhook disabled)'
}

/** Webhook events as a table; dead letters get a Redeliver button when `redeliver` is given. */
export function EventsTable(props: {
  readonly events: readonly WebhookEventState[]
  readonly caption: string
  readonly keyLabel?: (keyId: string | undefined) => string
  readonly redeliver?: (eventId: string) => Promise<void>
}) {
  const action = useAction()
  return (
    <div class="table-wrap">
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            {props.keyLabel && <th scope="col">Key</th>}
            <th scope="col">Request</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last response</th>
            <th scope="col">Created</th>
            {props.redeliver && <th scope="col">Action</th>}
          </tr>
        </thead>
        <tbody>
          {props.events.map((event) => (
            <tr key={event.eventId} data-event-id={event.eventId} data-state={event.state}>
              <td>
                <code title={event.eventId}>{short(event.eventId)}</code>
              </td>
              {props.keyLabel && <td>{props.keyLabel(event.keyId)}</td>}
              <td>
                {event.requestId ? (
                  <code title={event.requestId}>{short(event.requestId)}</code>
                ) : (
                  'test event'
                )}
              </td>
              <td class={`state state-${event.state}`}>{eventOutcome(event)}</td>
              <td>{event.attempts}</td>
              <td>{event.lastStatus !== null ? `HTTP ${event.lastStatus}` : (event.lastError ?? '—')}</td>
              <td>{event.createdAt === undefined ? '—' : formatTime(event.createdAt)}</td>
              {props.redeliver && (
                <td>
                  {(event.state === 'dead' || event.state === 'disabled') && (
                    <button
                      type="button"
                      disabled={action.busy}
                      onClick={() =>
                        void action.run(async () => {
                          await props.redeliver?.(event.eventId)
                          return `Event ${short(event.eventId)} is queued again.`
                        })
                      }
                    >
                      Redeliver <span class="visually-hidden">{event.eventId}</span>
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <Notice notice={action.notice} />
    </div>
  )
}

/** A secret shown once, with a copy button; focus moves here so it is announced. */
export function SecretPanel(props: {
  readonly secret: string
  readonly what: string
  readonly done: () => void
}) {
  const [copied, setCopied] = useState<string>('')
  const heading = useRef<HTMLHeadingElement>(null)
  const id = useId()
  useEffect(() => heading.current?.focus(), [])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret)
      setCopied('Copied to the clipboard.')
    } catch {
      // No clipboard permission (an insecure origin, a headless browser): select it for Ctrl+C.
      const field = document.getElementById(`${id}-secret`) as HTMLInputElement | null
      field?.select()
      setCopied('Selected: press Ctrl+C (⌘C) to copy.')
    }
  }
  return (
    <section class="secret" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} tabIndex={-1} ref={heading}>
        {props.what}: copy the secret now
      </h3>
      <p>It is shown this once and cannot be shown again. Partners sign in and call the API with it.</p>
      <label for={`${id}-secret`}>Secret</label>
      <div class="row">
        <input id={`${id}-secret`} readOnly value={props.secret} class="mono" autocomplete="off" />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p role="status">{copied}</p>
      <button type="button" class="secondary" onClick={props.done}>
        I have stored it
      </button>
    </section>
  )
}
