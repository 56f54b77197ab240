/**
 * The partner's view (its API key): its webhook, deliveries, dead letters, requests and usage.
 * Request statuses arrive over the status stream; the lists are refreshed when one changes and
 * every few seconds (new requests and retries are not streamed).
 */
import type {
  ApiKey,
  ChainsResponse,
  HistoryRequestV3,
  HistoryTxV3,
  PartnerUsage,
  RequestsPageV3,
  WebhookDeadLetters,
  WebhookEventState,
} from '@pontis/generated/intents/types'
import { useEffect, useState } from 'preact/hooks'
import { api, parseRateLimit } from './api.js'
import {
  EventsTable,
  formatTime,
  Notice,
  Section,
  Status,
  short,
  useAction,
  useInterval,
  useLoad,
  WebhookForm,
} from './common.js'
import { isFinalStatus, openStatusStream } from './stream.js'

const REFRESH_MS = 4000

export function PartnerView() {
  const key = useLoad(async () => (await api<ApiKey>('GET', '/partner/key')).body)
  const events = useLoad(
    async () => (await api<WebhookDeadLetters>('GET', '/partner/webhook/events?limit=50')).body.events,
  )
  const requests = useLoad(
    async () => (await api<RequestsPageV3>('GET', '/requests/v3?limit=20')).body.requests,
  )
  const [live, setLive] = useState(false)
  const [statuses, setStatuses] = useState<Record<string, string>>({})

  // One stream for the page's life; every update refreshes the lists it shows up in.
  const [stream] = useState(() =>
    openStatusStream((update) => {
      setStatuses((old) => ({ ...old, [update.requestId.toLowerCase()]: update.status }))
      void requests.reload()
      void events.reload()
    }, setLive),
  )
  useEffect(() => () => stream.close(), [stream])
  useEffect(() => {
    stream.follow((requests.data ?? []).filter((request) => !isFinalStatus(request.status)).map((r) => r.id))
  }, [stream, requests.data])
  useInterval(() => {
    void requests.reload()
    void events.reload()
  }, REFRESH_MS)

  const deadLetters = (events.data ?? []).filter(
    (event) => event.state === 'dead' || event.state === 'disabled',
  )
  const redeliver = async (eventId: string) => {
    await api('POST', `/partner/webhook/events/${encodeURIComponent(eventId)}/redeliver`)
    await events.reload()
  }

  return (
    <>
      <p class="live" role="status">
        {live ? 'Live: status updates arrive as they happen.' : 'Connecting to the status stream…'}
      </p>
      <Section title="Your key and usage" id="usage">
        <Status loaded={key} what="your key">
          {(record) => <Usage apiKey={record} />}
        </Status>
      </Section>
      <Section title="Webhook" id="webhook" busy={key.loading}>
        <Status loaded={key} what="your webhook">
          {(record) => (
            <>
              <WebhookForm
                key={record.id}
                idPrefix="partner-webhook"
                webhook={record.webhook}
                save={async (body) => {
                  await api('PUT', '/partner/webhook', body)
                  await key.reload()
                }}
              />
              <TestEvent sent={() => void events.reload()} />
            </>
          )}
        </Status>
      </Section>
      <Section title="Deliveries" id="deliveries" busy={events.loading}>
        <Status loaded={events} what="webhook deliveries" empty={(list) => list.length === 0}>
          {(list) => <EventsTable events={list} caption="Your webhook events, newest first" />}
        </Status>
      </Section>
      <Section title="Dead letters" id="partner-dead-letters" busy={events.loading}>
        <Status loaded={events} what="dead letters" empty={() => deadLetters.length === 0}>
          {() => (
            <EventsTable
              events={deadLetters}
              caption="Events given up on: redeliver once your receiver is fixed"
              redeliver={redeliver}
            />
          )}
        </Status>
      </Section>
      <Section title="Requests" id="requests" busy={requests.loading}>
        <Status loaded={requests} what="requests" empty={(list) => list.length === 0}>
          {(list) => <RequestList requests={list} liveStatuses={statuses} />}
        </Status>
      </Section>
    </>
  )
}

function Usage(props: { readonly apiKey: ApiKey }) {
  const usage = useLoad(async () => {
    const answer = await api<PartnerUsage>('GET', '/partner/usage')
    return { ...answer.body, window: parseRateLimit(answer.headers.get('ratelimit')) }
  })
  useInterval(() => void usage.reload(), 15_000)
  return (
    <>
      <dl class="facts">
        <dt>Key</dt>
        <dd>
          {props.apiKey.label} (<code>{props.apiKey.keyPrefix}…</code>)
        </dd>
        <dt>Tier</dt>
        <dd>{props.apiKey.tier}</dd>
      </dl>
      <Status loaded={usage} what="your usage">
        {(data) =>
          data.limits === null ? (
            <p>The operator turned rate limiting off.</p>
          ) : (
            <dl class="facts">
              <dt>Quotes</dt>
              <dd>
                {data.limits.quote.limit} per {data.limits.quote.windowSeconds} s
              </dd>
              <dt>Other calls</dt>
              <dd>
                {data.window
                  ? `${data.limits.other.limit - data.window.remaining} of ${data.limits.other.limit} used; the window resets in ${data.window.resetSeconds} s`
                  : `${data.limits.other.limit} per ${data.limits.other.windowSeconds} s`}
                {data.window && (
                  <meter
                    min={0}
                    max={data.limits.other.limit}
                    value={data.limits.other.limit - data.window.remaining}
                    aria-label="Other calls used in this window"
                  />
                )}
              </dd>
            </dl>
          )
        }
      </Status>
    </>
  )
}

function TestEvent(props: { readonly sent: () => void }) {
  const action = useAction()
  return (
    <div class="row">
      <button
        type="button"
        class="secondary"
        disabled={action.busy}
        onClick={() =>
          void action.run(async () => {
            const answer = await api<WebhookEventState>('POST', '/partner/webhook/test')
            props.sent()
            return `Test event ${short(answer.body.eventId)} queued: watch it under Deliveries.`
          })
        }
      >
        Send a test event
      </button>
      <Notice notice={action.notice} />
    </div>
  )
}

function RequestList(props: {
  readonly requests: readonly HistoryRequestV3[]
  readonly liveStatuses: Readonly<Record<string, string>>
}) {
  const chains = useLoad(async () => (await api<ChainsResponse>('GET', '/chains')).body.chains)
  const chainOf = (chainId: number) => chains.data?.find((chain) => chain.id === chainId)
  const txLink = (tx: HistoryTxV3) => {
    const chain = chainOf(tx.chainId)
    const label = `${short(tx.txHash)} on ${chain?.displayName ?? tx.chainId}`
    return chain?.explorerUrl ? (
      <a
        href={`${chain.explorerUrl.replace(/\/$/, '')}/tx/${tx.txHash}`}
        target="_blank"
        rel="noopener noreferrer"
      >
        {label}
      </a>
    ) : (
      <code>{label}</code>
    )
  }
  return (
    <ul class="requests">
      {props.requests.map((request) => {
        // The history is refreshed after each streamed update; until then the stream's word wins.
        const status = props.liveStatuses[request.id.toLowerCase()] ?? request.status
        const fees = request.data.fees
        const symbol = fees?.currency.symbol ?? ''
        return (
          <li key={request.id} class="card" data-request-id={request.id} data-status={status}>
            <h3>
              <code title={request.id}>{short(request.id)}</code>{' '}
              <span class={`badge status-${status}`}>{status}</span>
            </h3>
            <ol class="timeline" aria-label="Status timeline">
              <li>Quoted {formatTime(request.createdAt)}</li>
              {request.data.inTxs.map((tx) => (
                <li key={tx.txHash}>
                  Deposit {txLink(tx)} at {formatTime(tx.timestamp * 1000)}
                </li>
              ))}
              {request.data.outTxs.map((tx) => (
                <li key={tx.txHash}>
                  {status === 'refund' ? 'Refund' : 'Fill'} {txLink(tx)} at {formatTime(tx.timestamp * 1000)}
                </li>
              ))}
              <li>
                {isFinalStatus(status) ? 'Final' : 'Now'}: {status} (updated {formatTime(request.updatedAt)})
              </li>
            </ol>
            {request.data.failReason !== 'N/A' && <p class="error">Failed: {request.data.failReason}</p>}
            {fees && (
              <dl class="facts fees">
                <dt>Execution fee</dt>
                <dd>
                  {fees.quoted.execution.amountFormatted} {symbol}
                </dd>
                <dt>Service fee</dt>
                <dd>
                  {fees.quoted.platform.amountFormatted} {symbol}
                </dd>
                <dt>App fee</dt>
                <dd>
                  {fees.quoted.app.amountFormatted} {symbol}
                </dd>
                <dt>Sponsored</dt>
                <dd>
                  {fees.quoted.sponsored.amountFormatted} {symbol}
                </dd>
              </dl>
            )}
          </li>
        )
      })}
    </ul>
  )
}
