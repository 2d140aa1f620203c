import type { ReactNode } from 'react';
import { CopyButton, Modal } from './ui';

/** Shows a freshly created secret once (API key, access token), with a copy button. */
export function SecretDialog({
  title,
  label,
  secret,
  onClose,
  children,
}: {
  title: string;
  /** Label of the read-only field holding the secret. */
  label: string;
  /** The secret and the name it was created under; null closes the dialog. */
  secret: { name: string; value: string } | null;
  onClose(): void;
  /** Extra actions shown before "Done". */
  children?: ReactNode;
}) {
  return (
    <Modal title={title} open={secret !== null} onClose={onClose}>
      {secret && (
        <div className="secret">
          <p className="secret-said">
            This is the only time the secret of{' '}
            <strong>
              “<bdi>{secret.name}</bdi>”
            </strong>{' '}
            is shown: copy it now and keep it somewhere safe.
          </p>
          <label htmlFor="new-secret">{label}</label>
          <div className="secret-row">
            <input
              id="new-secret"
              readOnly
              value={secret.value}
              className="mono"
              onFocus={(e) => e.currentTarget.select()}
            />
            <CopyButton text={secret.value} />
          </div>
          <div className="form-actions">
            {children}
            <button type="button" className="btn btn-primary" onClick={onClose}>
              Done
            </button>
          </div>
        </div>
      )}
    </Modal>
  );
}
