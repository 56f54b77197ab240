/** The dashboard's entry: sign-in, then the operator's or the partner's view. */
import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { type Role, signIn, signOut } from './api.js'
import { messageOf } from './common.js'
import { OperatorView } from './operator.js'
import { PartnerView } from './partner.js'

function SignIn(props: { readonly signedIn: (role: Role) => void }) {
  const [role, setRole] = useState<Role>('operator')
  const [credential, setCredential] = useState('')
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    try {
      await signIn(role, credential)
      // The credential now lives in api.ts only; the form forgets it.
      setCredential('')
      props.signedIn(role)
    } catch (caught) {
      setError(messageOf(caught))
    } finally {
      setBusy(false)
    }
  }
  return (
    <form
      class="signin stack"
      onSubmit={(event) => void submit(event)}
      method="post"
      aria-labelledby="signin-title"
    >
      <h2 id="signin-title">Sign in</h2>
      <fieldset>
        <legend>I am</legend>
        <label class="check">
          <input
            type="radio"
            name="role"
            checked={role === 'operator'}
            onChange={() => setRole('operator')}
          />
          the operator (ADMIN_TOKEN)
        </label>
        <label class="check">
          <input type="radio" name="role" checked={role === 'partner'} onChange={() => setRole('partner')} />a
          partner (API key)
        </label>
      </fieldset>
      <label for="credential">{role === 'operator' ? 'Admin token' : 'API key'}</label>
      <input
        id="credential"
        type="password"
        required
        autocomplete="off"
        spellcheck={false}
        value={credential}
        onInput={(event) => setCredential(event.currentTarget.value)}
        aria-describedby="credential-help"
      />
      <p id="credential-help" class="muted">
        {role === 'operator'
          ? 'npm start prints the admin token of a local run; otherwise it is the ADMIN_TOKEN setting.'
          : 'The pk_… secret the operator gave you.'}{' '}
        It stays in this tab's memory only: reloading or closing the tab signs you out.
      </p>
      <div>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </div>
      {error !== undefined && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </form>
  )
}

function App() {
  const [role, setRole] = useState<Role | undefined>(undefined)
  const heading = useRef<HTMLHeadingElement>(null)
  // After signing in or out, focus moves to the page's heading so the new view is announced.
  useEffect(() => heading.current?.focus(), [role])
  return (
    <>
      <header>
        <h1 tabIndex={-1} ref={heading}>
          Pontis dashboard{role ? ` — ${role === 'operator' ? 'operator' : 'partner'}` : ''}
        </h1>
        {role && (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              signOut()
              setRole(undefined)
            }}
          >
            Sign out
          </button>
        )}
      </header>
      <main>
        {role === undefined && <SignIn signedIn={setRole} />}
        {role === 'operator' && <OperatorView />}
        {role === 'partner' && <PartnerView />}
      </main>
    </>
  )
}

const root = document.getElementById('app')
if (root) {
  root.textContent = ''
  render(<App />, root)
}
