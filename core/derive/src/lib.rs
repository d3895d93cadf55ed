//! `#[derive(Tree)]`: implements `quabla::tree::Tree` for a struct whose fields are trees,
//! flattening them in field order. A field marked `#[tree(static)]` is not a leaf: it is
//! cloned into every rebuilt tree (a layer count, an activation, a name), as equinox's
//! static fields.
//!
//! ```ignore
//! use quabla::{tree::Tree, Array};
//!
//! #[derive(Clone, Tree)]
//! struct Mlp {
//!     layers: Vec<(Array, Array)>,
//!     #[tree(static)]
//!     width: usize,
//! }
//! ```

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{parse_macro_input, parse_quote, Data, DeriveInput, Field, Fields, Index};

/// Derives `quabla::tree::Tree` for a struct (named, tuple or unit fields).
#[proc_macro_derive(Tree, attributes(tree))]
pub fn derive_tree(input: TokenStream) -> TokenStream {
    let ast = parse_macro_input!(input as DeriveInput);
    match expand(ast) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Whether a field carries `#[tree(static)]`; any other `tree(...)` is an error.
fn is_static(field: &Field) -> syn::Result<bool> {
    let mut found = false;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("tree")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("static") {
                found = true;
                Ok(())
            } else {
                Err(meta.error("the only `tree` attribute is `#[tree(static)]`"))
            }
        })?;
    }
    Ok(found)
}

fn expand(mut ast: DeriveInput) -> syn::Result<Tokens> {
    let Data::Struct(data) = &ast.data else {
        return Err(syn::Error::new_spanned(
            &ast.ident,
            "derive(Tree) supports structs; implement quabla::tree::Tree by hand for enums and \
             unions",
        ));
    };
    let mut flatten = Vec::new();
    let mut rebuild = Vec::new();
    for (i, field) in data.fields.iter().enumerate() {
        let access = match &field.ident {
            Some(name) => quote!(#name),
            None => {
                let index = Index::from(i);
                quote!(#index)
            }
        };
        let value = if is_static(field)? {
            quote!(::core::clone::Clone::clone(&self.#access))
        } else {
            flatten.push(quote!(::quabla::tree::Tree::flatten_into(&self.#access, leaves);));
            quote!(::quabla::tree::Tree::unflatten_like(&self.#access, leaves)?)
        };
        rebuild.push(match &field.ident {
            Some(name) => quote!(#name: #value),
            None => value,
        });
    }
    let built = match &data.fields {
        Fields::Named(_) => quote!(Self { #(#rebuild),* }),
        Fields::Unnamed(_) => quote!(Self ( #(#rebuild),* )),
        Fields::Unit => quote!(Self),
    };
    // Every type parameter must itself be a tree (a `Vec<T>` field needs `T: Tree`).
    let params: Vec<_> = ast
        .generics
        .type_params()
        .map(|t| t.ident.clone())
        .collect();
    let where_clause = ast.generics.make_where_clause();
    for p in params {
        where_clause
            .predicates
            .push(parse_quote!(#p: ::quabla::tree::Tree));
    }
    let (impl_generics, ty_generics, where_clause) = ast.generics.split_for_impl();
    let name = &ast.ident;
    let leaves = format_ident!("leaves");
    Ok(quote! {
        impl #impl_generics ::quabla::tree::Tree for #name #ty_generics #where_clause {
            fn flatten_into(&self, #leaves: &mut ::std::vec::Vec<::quabla::Array>) {
                #(#flatten)*
                let _ = #leaves;
            }

            fn unflatten_like(
                &self,
                #leaves: &mut dyn ::core::iter::Iterator<Item = ::quabla::Array>,
            ) -> ::quabla::Result<Self> {
                let _ = &#leaves;
                ::core::result::Result::Ok(#built)
            }
        }
    })
}
