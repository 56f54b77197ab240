-- The last block height at which the chain may still include a job's current transaction, where
-- the family bounds it (SVM: the lastValidBlockHeight of the blockhash it was signed with). Kept
-- beside the bytes so that, after a crash, the solver can still tell a transaction that provably
-- can never land (and may be signed again) from one that might.
ALTER TABLE solver_jobs ADD COLUMN valid_through bigint;
