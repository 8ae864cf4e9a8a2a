"""One module per `rightsizer` verb, each with its `VERB` (its help, options and what it runs); cli/main.py lists
them in the order the help shows them and builds the parser from them."""
