//! Media constructors and MIME sniffing for images, audio and documents.
