"""The output layer: the JSON documents, the one emitter and the one rich renderer. Nothing else imports rich."""
