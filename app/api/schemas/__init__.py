"""Request and response models of the REST face, one module per resource."""
