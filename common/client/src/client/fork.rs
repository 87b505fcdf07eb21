//! Another client to the same API as the same identity, with its own connection: for
//! callers that read many things at once (the inventory's per-guest reads, one client
//! per worker thread), without a second login.

use std::sync::atomic::Ordering;

use super::{ApiError, Client};

impl Client {
    /// A client with the same endpoint, trust, credentials (token, or this client's
    /// ticket), timeout and retry budget, and a connection of its own. Sends nothing.
    /// Reads through a plan are not carried over (the plan is a check run's).
    pub fn fork(&self) -> Result<Client, ApiError> {
        let fork = Client::unauthenticated(self.endpoint.clone(), self.trust.clone(), self.timeout_secs)?;
        fork.retry_budget_ms
            .store(self.retry_budget_ms.load(Ordering::Relaxed), Ordering::Relaxed);
        fork.window_is_timeout
            .store(self.window_is_timeout.load(Ordering::Relaxed), Ordering::Relaxed);
        fork.answered
            .store(self.answered.load(Ordering::Relaxed), Ordering::Relaxed);
        let credentials = std::sync::Mutex::new(self.credentials().clone());
        Ok(Client {
            credentials,
            local: self.local.clone(),
            base_url: self.base_url.clone(),
            progress_sink: self.progress_sink.clone(),
            ..fork
        })
    }
}
