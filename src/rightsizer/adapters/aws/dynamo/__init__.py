"""The single DynamoDB table: its key formats (`keys`); the store itself is adapters/aws/store.py."""
