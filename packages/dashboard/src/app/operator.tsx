/** The operator's view (ADMIN_TOKEN): keys, tiers and limits, every partner's webhooks and dead letters. */
import type {
  ApiKey,
  ApiKeyList,
  ApiKeySecret,
  ApiKeyTier,
  RateLimitPolicyAnswer,
  WebhookDeadLetters,
} from '@pontis/generated/intents/types'
import { useState } from 'preact/hooks'
import { api } from './api.js'
import {
  EventsTable,
  formatTime,
  Notice,
  SecretPanel,
  Section,
  Status,
  useAction,
  useInterval,
  useLoad,
  WebhookForm,
} from './common.js'

const TIERS: readonly ApiKeyTier[] = ['public', 'standard', 'elevated']

export function OperatorView() {
  const keys = useLoad(async () => (await api<ApiKeyList>('GET', '/admin/keys')).body.keys)
  const deadLetters = useLoad(
    async () => (await api<WebhookDeadLetters>('GET', '/admin/webhooks/dead-letters')).body.events,
  )
  const [secret, setSecret] = useState<{ value: string; what: string } | undefined>(undefined)
  useInterval(() => void deadLetters.reload(), 5000)
  const labelOf = (keyId: string | undefined) =>
    keys.data?.find((key) => key.id === keyId)?.label ?? keyId ?? '—'

  return (
    <>
      {secret && <SecretPanel secret={secret.value} what={secret.what} done={() => setSecret(undefined)} />}
      <Section title="Create an API key" id="create-key">
        <CreateKeyForm
          created={(created) => {
            setSecret({ value: created.secret, what: `Key “${created.key.label}” created` })
            void keys.reload()
          }}
        />
      </Section>
      <Section title="API keys" id="keys" busy={keys.loading}>
        <Status loaded={keys} what="API keys" empty={(list) => list.length === 0}>
          {(list) => (
            <KeysTable
              keys={list}
              changed={() => void keys.reload()}
              rotated={(rotated) =>
                setSecret({ value: rotated.secret, what: `Key “${rotated.key.label}” rotated` })
              }
            />
          )}
        </Status>
      </Section>
      <Section title="Tiers and rate limits" id="limits">
        <LimitsTable />
      </Section>
      <Section title="Dead letters of every partner" id="dead-letters" busy={deadLetters.loading}>
        <Status loaded={deadLetters} what="dead letters" empty={(events) => events.length === 0}>
          {(events) => (
            <EventsTable
              events={events}
              caption="Webhook events given up on, newest first"
              keyLabel={labelOf}
              redeliver={async (eventId) => {
                await api('POST', `/admin/webhooks/events/${encodeURIComponent(eventId)}/redeliver`)
                await deadLetters.reload()
              }}
            />
          )}
        </Status>
      </Section>
    </>
  )
}

function CreateKeyForm(props: { readonly created: (created: ApiKeySecret) => void }) {
  const [label, setLabel] = useState('')
  const [tier, setTier] = useState<ApiKeyTier>('standard')
  const [url, setUrl] = useState('')
  const [headerName, setHeaderName] = useState('')
  const [headerValue, setHeaderValue] = useState('')
  const action = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    void action.run(async () => {
      const webhook =
        url.trim() === ''
          ? undefined
          : {
              enabled: true,
              url: url.trim(),
              ...(headerName.trim() === '' ? {} : { headers: { [headerName.trim()]: headerValue } }),
            }
      const answer = await api<ApiKeySecret>('POST', '/admin/keys', {
        label: label.trim(),
        tier,
        ...(webhook ? { webhook } : {}),
      })
      props.created(answer.body)
      setLabel('')
      setUrl('')
      setHeaderName('')
      setHeaderValue('')
      return `Key “${answer.body.key.label}” created.`
    })
  }
  return (
    <form onSubmit={submit} class="stack" aria-label="Create an API key">
      <label for="new-key-label">Label (who the key is for)</label>
      <input
        id="new-key-label"
        required
        maxLength={100}
        value={label}
        onInput={(event) => setLabel(event.currentTarget.value)}
        autocomplete="off"
      />
      <label for="new-key-tier">Tier</label>
      <select
        id="new-key-tier"
        value={tier}
        onChange={(event) => setTier(event.currentTarget.value as ApiKeyTier)}
      >
        {TIERS.map((name) => (
          <option value={name} key={name}>
            {name}
          </option>
        ))}
      </select>
      <label for="new-key-webhook">Webhook URL (optional)</label>
      <input
        id="new-key-webhook"
        type="url"
        placeholder="https://hooks.example.com/pontis"
        value={url}
        onInput={(event) => setUrl(event.currentTarget.value)}
        autocomplete="off"
      />
      <div class="row">
        <div class="stack grow">
          <label for="new-key-header-name">Custom header name (optional)</label>
          <input
            id="new-key-header-name"
            placeholder="X-Header-Name"
            value={headerName}
            onInput={(event) => setHeaderName(event.currentTarget.value)}
            autocomplete="off"
          />
        </div>
        <div class="stack grow">
          <label for="new-key-header-value">Custom header value</label>
          <input
            id="new-key-header-value"
            value={headerValue}
            onInput={(event) => setHeaderValue(event.currentTarget.value)}
            autocomplete="off"
          />
        </div>
      </div>
      <div>
        <button type="submit" disabled={action.busy}>
          Create key
        </button>
      </div>
      <Notice notice={action.notice} />
    </form>
  )
}

function KeysTable(props: {
  readonly keys: readonly ApiKey[]
  readonly changed: () => void
  readonly rotated: (rotated: ApiKeySecret) => void
}) {
  const action = useAction()
  const [confirming, setConfirming] = useState<string | undefined>(undefined)
  const [editing, setEditing] = useState<string | undefined>(undefined)
  const editedKey = props.keys.find((key) => key.id === editing)
  return (
    <>
      <div class="table-wrap">
        <table>
          <caption>Every key, oldest first; secrets are never listed</caption>
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Prefix</th>
              <th scope="col">Tier</th>
              <th scope="col">Webhook</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {props.keys.map((key) => (
              <tr key={key.id} data-key-id={key.id}>
                <th scope="row">{key.label}</th>
                <td>
                  <code>{key.keyPrefix}…</code>
                </td>
                <td>{key.tier}</td>
                <td>
                  {key.webhook === null ? (
                    'none'
                  ) : (
                    <>
                      <span class="url">{key.webhook.url}</span>{' '}
                      <span class={key.webhook.enabled ? 'ok' : 'muted'}>
                        ({key.webhook.enabled ? 'enabled' : 'disabled'}
                        {key.webhook.headers
                          ? `, headers: ${Object.keys(key.webhook.headers).join(', ')}`
                          : ''}
                        )
                      </span>
                    </>
                  )}
                </td>
                <td>{formatTime(key.createdAt)}</td>
                <td>
                  <div class="actions">
                    {key.revokedAt !== null ? (
                      <span class="muted">revoked {formatTime(key.revokedAt)}</span>
                    ) : (
                      <>
                        <button type="button" class="secondary" onClick={() => setEditing(key.id)}>
                          Webhook <span class="visually-hidden">of {key.label}</span>
                        </button>
                        <button
                          type="button"
                          class="secondary"
                          disabled={action.busy}
                          onClick={() =>
                            void action.run(async () => {
                              const answer = await api<ApiKeySecret>(
                                'POST',
                                `/admin/keys/${encodeURIComponent(key.id)}/rotate`,
                              )
                              props.rotated(answer.body)
                              props.changed()
                              return `Key “${key.label}” rotated: the old secret no longer works.`
                            })
                          }
                        >
                          Rotate <span class="visually-hidden">{key.label}</span>
                        </button>
                        {confirming === key.id ? (
                          <button
                            type="button"
                            class="danger"
                            disabled={action.busy}
                            onClick={() =>
                              void action.run(async () => {
                                await api('DELETE', `/admin/keys/${encodeURIComponent(key.id)}`)
                                setConfirming(undefined)
                                props.changed()
                                return `Key “${key.label}” revoked.`
                              })
                            }
                          >
                            Confirm revoke <span class="visually-hidden">{key.label}</span>
                          </button>
                        ) : (
                          <button type="button" class="danger" onClick={() => setConfirming(key.id)}>
                            Revoke <span class="visually-hidden">{key.label}</span>
                          </button>
                        )}
                      </>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Notice notice={action.notice} />
      {editedKey && (
        <div class="panel">
          <h3>Webhook of “{editedKey.label}”</h3>
          <WebhookForm
            key={editedKey.id}
            idPrefix={`webhook-${editedKey.id}`}
            webhook={editedKey.webhook}
            save={async (body) => {
              await api('PUT', `/admin/keys/${encodeURIComponent(editedKey.id)}/webhook`, body)
              props.changed()
            }}
          />
          <button type="button" class="secondary" onClick={() => setEditing(undefined)}>
            Close
          </button>
        </div>
      )}
    </>
  )
}

function LimitsTable() {
  const limits = useLoad(
    async () => (await api<RateLimitPolicyAnswer>('GET', '/admin/rate-limits')).body.policy,
  )
  return (
    <Status loaded={limits} what="rate limits">
      {(policy) =>
        policy === null ? (
          <p>Rate limiting is off (RATE_LIMITS=off).</p>
        ) : (
          <div class="table-wrap">
            <table>
              <caption>Requests per window, by caller; set with RATE_LIMITS</caption>
              <thead>
                <tr>
                  <th scope="col">Caller</th>
                  <th scope="col">Quotes (/quote, /quote/v2, /price)</th>
                  <th scope="col">Other routes</th>
                </tr>
              </thead>
              <tbody>
                {(['anonymous', ...TIERS] as const).map((caller) => (
                  <tr key={caller}>
                    <th scope="row">
                      {caller === 'anonymous' ? 'anonymous (per address)' : `tier ${caller}`}
                    </th>
                    <td>
                      {policy[caller].quote.limit} per {policy[caller].quote.windowSeconds} s
                    </td>
                    <td>
                      {policy[caller].other.limit} per {policy[caller].other.windowSeconds} s
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      }
    </Status>
  )
}
