use super::DownloadEvent;
use crate::abi::AbiError;

/// An event that is ready at once: for backends whose memory the host can read directly.
pub struct ReadyEvent(pub Vec<u8>);

impl DownloadEvent for ReadyEvent {
    fn is_ready(&self) -> bool {
        true
    }
    fn wait(self: Box<Self>) -> Result<Vec<u8>, AbiError> {
        Ok(self.0)
    }
    fn on_ready(&mut self, f: Box<dyn FnOnce() + Send>) {
        f()
    }
}
