/* placeholder: replaced by the glue in the next commit */
