module dev.rdmarpc.cuda {

    exports dev.rdmarpc.cuda;
}
