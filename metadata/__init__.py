"""Export and import of topic and subscription-group definitions in RocketMQ's ``exportMetadata`` JSON."""
